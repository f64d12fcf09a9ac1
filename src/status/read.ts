/** Read what `hookbus status` reports: the registry in force and one discovery round. */
import type { NatsConnection } from "@nats-io/transport-node";
import { Bus } from "../bus/bus.js";
import { Subjects } from "../bus/subjects.js";
import { RegistryStore } from "../registry/store.js";
import { discover, type DiscoverOptions } from "../observability/discovery.js";
import type { DiscoveryReply } from "../observability/discovery-schema.js";
import {
  componentProblems,
  readIndexerStatus,
  readSealerStatus,
  type Absent,
  type IndexerStatus,
  type SealerStatus,
} from "./components.js";
import { durableProblems } from "./durables.js";
import { StopStore } from "../registry/stops.js";
import { readStops, stopProblems, type StopsStatus } from "./stops.js";
import { buildStatusReport, type StatusReport } from "./report.js";

export interface ReadStatusOptions extends Omit<DiscoverOptions, "role"> {
  namespace?: string;
  /** `--check` fails when the evidence lag is older than this many seconds (default 60). */
  maxSealLagS?: number;
  /** The indexer's durable consumer (default `<ns>-indexer`). */
  indexerConsumer?: string;
}

export type FullStatus = StatusReport & {
  invalidReplies: number;
  sealer: SealerStatus | Absent;
  indexer: IndexerStatus | Absent;
  stops: StopsStatus;
};

/** How long a second, coordinator-only round waits when none answered the first. */
const SECOND_ROUND_MS = 500;

/**
 * No coordinator answered: ask them alone. The server's "no responders" proves none runs; a round
 * that nobody answers although something listens is a coordinator that is busy (loading a large
 * Cedar set holds it for seconds), which "no coordinator is alive" would misreport.
 */
async function coordinatorsIfNoneAnswered(
  nc: NatsConnection,
  namespace: string,
  replies: readonly DiscoveryReply[],
): Promise<{ replies: DiscoveryReply[]; silent: boolean }> {
  if (replies.some((r) => r.role === "coordinator")) return { replies: [], silent: false };
  const again = await discover(nc, namespace, {
    role: "coordinator",
    maxWaitMs: SECOND_ROUND_MS,
    stallMs: 60,
  });
  return {
    replies: again.replies,
    silent: again.replies.length === 0 && again.nobodyListens !== true,
  };
}

export async function readStatus(
  nc: NatsConnection,
  options: ReadStatusOptions = {},
): Promise<FullStatus> {
  const subjects = new Subjects(options.namespace);
  const bus = await Bus.open(nc, { namespace: subjects.namespace });
  const [snapshot, found, sealer, indexer, stops] = await Promise.all([
    RegistryStore.open(nc, subjects).then((store) => store.current()),
    discover(nc, subjects.namespace, options),
    readSealerStatus(bus),
    readIndexerStatus(bus, options.indexerConsumer),
    readStops(StopStore.open(nc, subjects)),
  ]);
  const coordinators = await coordinatorsIfNoneAnswered(nc, subjects.namespace, found.replies);
  const report = buildStatusReport(
    snapshot.revision,
    snapshot.document,
    [...found.replies, ...coordinators.replies],
    { coordinatorsSilent: coordinators.silent },
  );
  report.problems.push(...componentProblems(sealer, options.maxSealLagS ?? 60));
  report.problems.push(...stopProblems(stops, report.coordinators));
  const policies = snapshot.document.policies.map((p) => p.name);
  const indexerConsumer = options.indexerConsumer ?? `${subjects.namespace}-indexer`;
  report.problems.push(...(await durableProblems(bus, indexerConsumer, policies)));
  return { ...report, invalidReplies: found.invalid, sealer, indexer, stops };
}
