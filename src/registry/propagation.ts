/**
 * Did a registry change reach enforcement? `hookbus registry apply` asks every live coordinator
 * (discovery) which revision it has in force, until all report the new one or the deadline: an
 * emergency rule that nobody enforces must not be reported as applied.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { discover } from "../observability/discovery.js";
import { sleep } from "../foundation/time.js";

export interface Propagation {
  revision: number;
  /** Time from the start of the wait until every coordinator reported it (or the deadline). */
  elapsedMs: number;
  /** Every coordinator that answered, with the revision it reported last. */
  coordinators: { id: string; revision: number }[];
  /** Those still on an older revision at the deadline. */
  laggards: { id: string; revision: number }[];
}

/** One discovery round is short: coordinators answer in milliseconds. */
const ROUND = { maxWaitMs: 500, stallMs: 60 };
const PAUSE_MS = 50;

/** Which revision a coordinator reports: of the policy set, or of the emergency stop list. */
export type RevisionOf = "registry" | "stops";

export async function awaitRevision(
  nc: NatsConnection,
  namespace: string,
  revision: number,
  deadlineMs: number,
  of: RevisionOf = "registry",
): Promise<Propagation> {
  const started = Date.now();
  const seen = new Map<string, number>();
  for (;;) {
    const found = await discover(nc, namespace, { role: "coordinator", ...ROUND });
    for (const reply of found.replies)
      if (reply.role === "coordinator")
        // A coordinator that does not report the stop list does not enforce it: 0.
        seen.set(reply.id, of === "registry" ? reply.registryRevision : (reply.stopsRevision ?? 0));
    const coordinators = [...seen].map(([id, rev]) => ({ id, revision: rev }));
    const laggards = coordinators.filter((c) => c.revision < revision);
    const elapsedMs = Date.now() - started;
    // No coordinator at all: nothing to wait for (calls fail closed until one starts, and it
    // starts on the revision in force).
    if (laggards.length === 0 || elapsedMs >= deadlineMs)
      return { revision, elapsedMs, coordinators, laggards };
    await sleep(Math.min(PAUSE_MS, Math.max(0, deadlineMs - elapsedMs)));
  }
}
