/**
 * Did a registry change reach enforcement? `hookbus registry apply` asks every live coordinator
 * (discovery) which revision it has in force, until all report the new one or the deadline: an
 * emergency rule that nobody enforces must not be reported as applied.
 *
 * A coordinator loading a revision may not answer for a while (parsing a large Cedar set holds
 * its event loop for seconds): silence is not absence. The coordinators that answered before the
 * change (`coordinatorsBefore`) are waited for until they report it or the deadline, and a round
 * that nobody answered although something listens is waited out too. Only the server's "no
 * responders" means that no coordinator runs.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { discover } from "../observability/discovery.js";
import { sleep } from "../foundation/time.js";

export interface CoordinatorRevision {
  id: string;
  revision: number;
  /** false: it answered before the change and not since (still loading it, or stopped). */
  answered?: false;
}

export interface Propagation {
  revision: number;
  /** Time from the start of the wait until every coordinator reported it (or the deadline). */
  elapsedMs: number;
  /** Every coordinator known, with the revision it reported last. */
  coordinators: CoordinatorRevision[];
  /** Those still on an older revision at the deadline. */
  laggards: CoordinatorRevision[];
  /** No coordinator answered, yet something listens: enforcement is not confirmed. */
  unanswered?: true;
}

/** The coordinators that answered one round, before a change. */
export interface CoordinatorsBefore {
  coordinators: { id: string; revision: number }[];
}

/** One discovery round is short when coordinators are idle: they answer in milliseconds. */
const ROUND = { maxWaitMs: 500, stallMs: 60 };
const PAUSE_MS = 50;

/** Which revision a coordinator reports: of the policy set, or of the emergency stop list. */
export type RevisionOf = "registry" | "stops";

async function round(nc: NatsConnection, namespace: string, of: RevisionOf, maxWaitMs: number) {
  const found = await discover(nc, namespace, {
    role: "coordinator",
    maxWaitMs: Math.max(1, Math.min(ROUND.maxWaitMs, maxWaitMs)),
    stallMs: ROUND.stallMs,
  });
  const answers = new Map<string, number>();
  for (const reply of found.replies)
    if (reply.role === "coordinator")
      // A coordinator that does not report the stop list does not enforce it: 0.
      answers.set(
        reply.id,
        of === "registry" ? reply.registryRevision : (reply.stopsRevision ?? 0),
      );
  const silent = answers.size === 0 && found.nobodyListens !== true;
  return { answers, silent, nobodyListens: found.nobodyListens === true };
}

/** Before a change: who is there to confirm it. */
export async function coordinatorsBefore(
  nc: NatsConnection,
  namespace: string,
  of: RevisionOf = "registry",
): Promise<CoordinatorsBefore> {
  const { answers } = await round(nc, namespace, of, ROUND.maxWaitMs);
  return { coordinators: [...answers].map(([id, revision]) => ({ id, revision })) };
}

/** The change is enforced: every known coordinator reports it, and no silence is left unexplained. */
export function isEnforced(p: Propagation): boolean {
  return p.laggards.length === 0 && p.unanswered !== true;
}

export async function awaitRevision(
  nc: NatsConnection,
  namespace: string,
  revision: number,
  deadlineMs: number,
  of: RevisionOf = "registry",
  before?: CoordinatorsBefore,
): Promise<Propagation> {
  const started = Date.now();
  const seen = new Map<string, CoordinatorRevision>();
  for (const c of before?.coordinators ?? []) seen.set(c.id, { ...c, answered: false });
  for (;;) {
    const found = await round(nc, namespace, of, deadlineMs - (Date.now() - started));
    // Nobody subscribes at all: those known from before have stopped, not fallen silent.
    if (found.nobodyListens) for (const [id, c] of seen) if (c.answered === false) seen.delete(id);
    for (const [id, rev] of found.answers) seen.set(id, { id, revision: rev });
    const coordinators = [...seen.values()];
    const laggards = coordinators.filter((c) => c.revision < revision);
    const unanswered = coordinators.length === 0 && found.silent;
    const elapsedMs = Date.now() - started;
    // No coordinator at all: nothing to wait for (calls fail closed until one starts, and it
    // starts on the revision in force).
    if ((laggards.length === 0 && !unanswered) || elapsedMs >= deadlineMs)
      return {
        revision,
        elapsedMs,
        coordinators,
        laggards,
        ...(unanswered ? { unanswered: true as const } : {}),
      };
    await sleep(Math.min(PAUSE_MS, Math.max(0, deadlineMs - elapsedMs)));
  }
}
