/**
 * When a policy's ask may have been lost, the coordinator asks again instead of failing the call
 * when its timeout ends. NATS core request/reply has no retransmission, and a NATS node that goes
 * away takes with it what it was relaying: the ask on its way to a worker, the verdict on its way
 * back. nats.js also drops what was published while its connection was down. Three cases:
 *
 * - this coordinator's connection came back: every unanswered ask is published again at once
 *   (its verdict may have gone to the old connection);
 * - the server told of a change in the cluster (a node left, entered lame-duck mode or came
 *   back): a worker's connection may have moved with an ask in hand, so the asks sent before the
 *   change and still unanswered ASK_AGAIN_AFTER_CHANGE_MS later are published again;
 * - "no responders" (the server knows no worker of the policy right now): while a worker moves
 *   between nodes its subscription is briefly nowhere, so for NO_RESPONDERS_GRACE_MS from the
 *   first such answer the ask is repeated; after it the policy is unavailable, and its failure
 *   mode applies to each call at once, as it always did, until a worker answers again.
 *
 * An ask is published again with the same reply token: the first verdict wins, a second one is
 * dropped. A worker may therefore see an ask twice (as it may when an agent re-sends a call to
 * another coordinator): policies must be safe to ask again (docs/policy-workers.md).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { ConnectionWatch } from "../bus/connection-watch.js";

/** After a cluster change, how long an ask may stay unanswered before it is asked again. */
export const ASK_AGAIN_AFTER_CHANGE_MS = 250;
/** How long "no responders" for a policy is taken for a worker moving, not a worker missing. */
export const NO_RESPONDERS_GRACE_MS = 250;
/** Pause before asking again after "no responders" (the worker's new subscription travels). */
export const NO_RESPONDERS_PAUSE_MS = 25;
/** Policies with an open "no responders" outage remembered at most (oldest forgotten first). */
const MAX_OUTAGES = 10_000;

export interface AskAgainTarget {
  /** Publish again every unanswered ask started before `before` (performance.now()), or all. */
  askAgain(before?: number): void;
}

export class AskAgain {
  /** Policy name → when its current run of "no responders" began (performance.now()). */
  private readonly outages = new Map<string, number>();
  private changeTimer: NodeJS.Timeout | undefined;
  private lastChange = 0;
  private readonly stopWatching: () => void;

  constructor(nc: NatsConnection, target: AskAgainTarget) {
    this.stopWatching = ConnectionWatch.of(nc).onChange((change) => {
      if (change === "reconnect") {
        target.askAgain();
        return;
      }
      this.lastChange = performance.now();
      // One timer for a burst of changes: it re-asks what was sent before the latest one.
      this.changeTimer ??= setTimeout(() => {
        this.changeTimer = undefined;
        target.askAgain(this.lastChange);
      }, ASK_AGAIN_AFTER_CHANGE_MS);
    });
  }

  /** A worker of `policy` answered: any outage of it is over. */
  answered(policy: string): void {
    if (this.outages.size > 0) this.outages.delete(policy);
  }

  /**
   * The server answered "no responders" for `policy`: the pause before asking again, or
   * undefined when the grace is spent (the policy is unavailable now).
   */
  noResponders(policy: string): number | undefined {
    const now = performance.now();
    const since = this.outages.get(policy);
    if (since === undefined) {
      this.outages.set(policy, now);
      for (const oldest of this.outages.keys()) {
        if (this.outages.size <= MAX_OUTAGES) break;
        this.outages.delete(oldest);
      }
      return NO_RESPONDERS_PAUSE_MS;
    }
    return now - since < NO_RESPONDERS_GRACE_MS ? NO_RESPONDERS_PAUSE_MS : undefined;
  }

  close(): void {
    this.stopWatching();
    clearTimeout(this.changeTimer);
    this.outages.clear();
  }
}
