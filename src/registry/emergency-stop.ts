/**
 * The emergency stop as a library: the guarantee `hookbus stop` gives, for any caller. Three steps,
 * in order: store the change by compare-and-set in the registry bucket's `stops` key; wait until
 * every live coordinator reports the new stop list in force (or the deadline); then wait out the
 * agents' staleness bound, since agents are not asked: past `AGENT_STOPS_STALE_AFTER_MS` after
 * the change was stored, no agent answers a call on its fast path from an older list.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { sleep } from "../foundation/time.js";
import type { Subjects } from "../bus/subjects.js";
import { awaitRevision, isEnforced, type Propagation } from "./propagation.js";
import { AGENT_STOPS_STALE_AFTER_MS, StopStore, type StopChange, type StopList } from "./stops.js";

export interface EmergencyStopOptions {
  /** The longest to wait for the coordinators to confirm, in ms; 0: store only, do not wait. */
  waitMs: number;
}

export interface EmergencyStopResult {
  /** The stop list after the change (its `revision` is the bucket's). */
  list: StopList;
  /** false: nothing to store (resuming what was not stopped). */
  changed: boolean;
  /** What the coordinators reported; undefined when nothing was stored or `waitMs` was 0. */
  propagation: Propagation | undefined;
  /**
   * Every live coordinator enforces the change and no agent's fast path can answer from an
   * older list. Also true when nothing changed; false when `waitMs` was 0 (not confirmed).
   */
  enforced: boolean;
}

/** Stores a stop (or resume) and confirms it is in force everywhere it is enforced. */
export async function applyEmergencyStop(
  nc: NatsConnection,
  subjects: Subjects,
  change: StopChange,
  options: EmergencyStopOptions,
): Promise<EmergencyStopResult> {
  const store = await StopStore.open(nc, subjects);
  const { list, changed } = await store.change(change);
  const storedAt = Date.now();
  if (!changed) return { list, changed, propagation: undefined, enforced: true };
  if (options.waitMs === 0) return { list, changed, propagation: undefined, enforced: false };
  const propagation = await awaitRevision(
    nc,
    subjects.namespace,
    list.revision,
    options.waitMs,
    "stops",
  );
  await sleep(storedAt + AGENT_STOPS_STALE_AFTER_MS - Date.now());
  return { list, changed, propagation, enforced: isEnforced(propagation) };
}
