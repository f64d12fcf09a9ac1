/**
 * Where calls and observations come in: one queue-group subscription each, sharing one cap on
 * the work in flight. Beyond the cap a message is refused at once with HOOKBUS_OVERLOADED
 * (unrecorded; the agent SDK re-sends a call, and the queue group finds a coordinator with room),
 * so memory stays bounded however fast agents send. A re-sent call joins its run in flight first,
 * which costs nothing.
 */
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { isHookbusError } from "../foundation/errors.js";
import { JoinedCalls } from "./joined-calls.js";
import { refuseOverloaded } from "./overload.js";

/** The calls and observations being handled, bounded by `max`. */
export class WorkInFlight {
  private readonly work = new Set<Promise<void>>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.work.size;
  }

  get full(): boolean {
    return this.work.size >= this.max;
  }

  /**
   * `work` never rejects (its handler's failures are caught before it gets here). `then`, not
   * `finally`: finally adds two closures and a promise per call for the same callback.
   */
  track(work: Promise<void>, done?: () => void): void {
    this.work.add(work);
    const over = () => {
      done?.();
      this.work.delete(work);
    };
    void work.then(over, over);
  }

  /** Resolves when everything in flight now has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.work]);
  }
}

export interface IntakeDeps {
  nc: NatsConnection;
  bus: Bus;
  inFlight: WorkInFlight;
  logger: Logger;
  /** Handles one call; traced by the caller's telemetry. */
  handleCall: (msg: Msg) => Promise<void>;
  handleObservation: (msg: Msg) => Promise<void>;
}

export interface Intake {
  /** Stop taking messages; those received are still handled (see WorkInFlight.settled). */
  drain(): Promise<void>;
}

function refuse(deps: IntakeDeps, msg: Msg, what: string): void {
  void refuseOverloaded(deps.bus, msg, deps.inFlight.max).catch((e: unknown) =>
    deps.logger.warn({ err: e }, `could not refuse ${what}`),
  );
}

function onCall(deps: IntakeDeps, joined: JoinedCalls, msg: Msg): void {
  const admitted = joined.admit(msg);
  if (admitted === undefined) return;
  if (deps.inFlight.full) {
    admitted.done();
    refuse(deps, msg, "a call");
    return;
  }
  const work = deps.handleCall(admitted.msg).catch((e: unknown) => {
    // Coded failures were answered and recorded by the handler; anything else is a bug.
    if (!isHookbusError(e)) deps.logger.error({ err: e }, "unhandled call failure");
  });
  deps.inFlight.track(work, admitted.done);
}

function onObservation(deps: IntakeDeps, msg: Msg): void {
  if (deps.inFlight.full) {
    refuse(deps, msg, "an observation");
    return;
  }
  const work = deps.handleObservation(msg).catch((e: unknown) => {
    deps.logger.error({ err: e }, "unhandled observation failure");
  });
  deps.inFlight.track(work);
}

function subscribe(
  deps: IntakeDeps,
  subject: string,
  what: string,
  handle: (msg: Msg) => void,
): Subscription {
  return deps.nc.subscribe(subject, {
    queue: deps.bus.subjects.coordinatorQueue,
    callback: (error, msg) => {
      if (error !== null) {
        deps.logger.error({ err: error }, `${what} subscription error`);
        return;
      }
      handle(msg);
    },
  });
}

export function openIntake(deps: IntakeDeps): Intake {
  const joined = new JoinedCalls();
  const calls = subscribe(deps, deps.bus.subjects.callWildcard, "call", (msg) =>
    onCall(deps, joined, msg),
  );
  // Observations: agents never write the log themselves (docs/protocol.md, "Observations").
  const observations = subscribe(deps, deps.bus.subjects.observeWildcard, "observe", (msg) =>
    onObservation(deps, msg),
  );
  return {
    async drain() {
      // Best effort on stop: a closed connection has nothing to drain.
      const undrained = (error: unknown) =>
        deps.logger.debug({ err: error }, "intake subscription did not drain");
      await calls.drain().catch(undrained);
      await observations.drain().catch(undrained);
    },
  };
}
