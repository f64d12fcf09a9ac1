/** Read what `hookbus status` reports: the registry in force and one discovery round. */
import type { NatsConnection } from "@nats-io/transport-node";
import { Subjects } from "../bus/subjects.js";
import { RegistryStore } from "../registry/store.js";
import { discover, type DiscoverOptions } from "./discovery.js";
import { buildStatusReport, type StatusReport } from "./status-report.js";

export interface ReadStatusOptions extends Omit<DiscoverOptions, "role"> {
  namespace?: string;
}

export async function readStatus(
  nc: NatsConnection,
  options: ReadStatusOptions = {},
): Promise<StatusReport & { invalidReplies: number }> {
  const subjects = new Subjects(options.namespace);
  const [snapshot, found] = await Promise.all([
    RegistryStore.open(nc, subjects).then((store) => store.current()),
    discover(nc, subjects.namespace, options),
  ]);
  const report = buildStatusReport(snapshot.revision, snapshot.document, found.replies);
  return { ...report, invalidReplies: found.invalid };
}
