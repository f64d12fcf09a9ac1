/**
 * Delivers an observational hook (after_tool_call, session_end, ...) to a policy from the log
 * stream, at least once. Each (policy, hook) has one durable pull consumer that every worker of
 * the policy shares, so each record goes to one of them, and records published while no worker
 * runs wait for the next one. A record is acked only after its handler succeeded; a handler
 * that throws gets the record again after a growing delay (nak with delay). Records that can
 * never succeed (undecodable, or an event that fails its schema) are terminated, not retried.
 *
 * nats-server 2.9 allows one filter subject per consumer, hence one consumer per hook.
 */
import {
  AckPolicy,
  DeliverPolicy,
  type ConsumerConfig,
  type ConsumerMessages,
  type JsMsg,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import { assertDurableShape, type DurableShape } from "../bus/durable-check.js";
import { isConsumerNotFound, isStreamNotFound } from "../bus/streams.js";
import type { Subjects } from "../bus/subjects.js";
import type { ObservationalHookName } from "../catalog/catalog.js";
import { ObservationRecord } from "../log/record.js";
import type { InFlight } from "./in-flight.js";
import { invokePolicy } from "../policy/invoke.js";
import type { Policy } from "../policy/policy.js";
import type { SessionStateStore } from "../policy/state/session-state.js";
import { backoffMs } from "../foundation/backoff.js";
import { sleep } from "../foundation/time.js";

export interface ObserveOptions {
  /** How long the server waits for an ack before it redelivers; kept alive while a handler runs. Default 30 s. */
  ackWaitMs?: number;
  /** Redelivery delay after a handler failed; doubles with each delivery, up to `maxRetryDelayMs`. Default 1 s. */
  retryDelayMs?: number;
  /** Default 60 s. */
  maxRetryDelayMs?: number;
  /** Deliveries of one record before the server gives up on it; -1 (default) keeps trying. */
  maxDeliver?: number;
  /** How often to look again for a log stream that does not exist yet. Default 5 s. */
  streamRetryMs?: number;
}

export const DEFAULT_OBSERVE_OPTIONS: Required<ObserveOptions> = {
  ackWaitMs: 30_000,
  retryDelayMs: 1_000,
  maxRetryDelayMs: 60_000,
  maxDeliver: -1,
  streamRetryMs: 5_000,
};

/**
 * The durable consumer of one policy's hook: `<ns>_<policy>_<hook>` with the namespace's dots
 * made underscores. Only `A-Z a-z 0-9 _ -` appear, all legal in consumer names. It is unique
 * within the namespace's log stream: policy names cannot contain dots, and no observational hook
 * name ends with `_<another hook name>`, so no two (policy, hook) pairs give the same name.
 */
export function observerDurableName(
  namespace: string,
  policy: string,
  hook: ObservationalHookName,
): string {
  return `${namespace.replaceAll(".", "_")}_${policy}_${hook}`;
}

/**
 * What makes an observer's durable its own: observation records of its hook only, each acked, and
 * from its creation on (a newly deployed policy starts with new observations, not the history).
 */
export function observerDurableShape(
  subjects: Subjects,
  hook: ObservationalHookName,
  kind?: "observed",
): DurableShape {
  return {
    // Every record kind of the hook (`kind` only for consumers made before refusals were filed).
    filter_subject: subjects.auditFilter(kind === undefined ? { hook } : { hook, kind }),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.New,
  };
}

/** Record problems that no redelivery can fix. */
const TERMINAL_CODES = new Set([
  "HOOKBUS_BAD_MESSAGE",
  "HOOKBUS_BLOB_MISSING",
  "HOOKBUS_INVALID_EVENT",
  "HOOKBUS_INVALID_CONTEXT",
]);

export interface ObserverOptions {
  bus: Bus;
  policy: Policy;
  hook: ObservationalHookName;
  state: SessionStateStore;
  inFlight: InFlight;
  hardStop: AbortSignal;
  /** How many records to pull ahead. */
  batch: number;
  settings: Required<ObserveOptions>;
}

export class Observer {
  readonly durable: string;
  private stopped = false;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> = Promise.resolve();
  private wake: (() => void) | undefined;
  /** The ack wait of the consumer in use (an existing one keeps its own). */
  private ackWaitMs: number;

  constructor(private readonly options: ObserverOptions) {
    this.ackWaitMs = options.settings.ackWaitMs;
    this.durable = observerDurableName(
      options.bus.subjects.namespace,
      options.policy.name,
      options.hook,
    );
  }

  private get log() {
    return this.options.bus.logger.child({
      policy: this.options.policy.name,
      hook: this.options.hook,
      durable: this.durable,
    });
  }

  /**
   * Creates the durable consumer (if missing) and starts consuming. When the log stream does not
   * exist yet (no coordinator has started), it keeps looking in the background instead of
   * failing, so workers and coordinators can start in any order.
   */
  async start(): Promise<void> {
    try {
      await this.ensureConsumer();
    } catch (error) {
      if (!isStreamNotFound(error)) throw error;
      this.log.warn(
        { stream: this.options.bus.subjects.logStream },
        "log stream not found yet; observations start once it exists",
      );
      this.loop = this.retryUntilStream();
      return;
    }
    this.loop = this.consume();
  }

  /** Stop pulling; records being handled finish (and are acked) through the runner's InFlight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    // Best effort on stop: a consumer that cannot close cleanly (a closed connection) has nothing
    // more to deliver.
    await this.messages?.close().catch((error: unknown) => {
      this.log.debug({ err: error }, "the observation consumer did not close cleanly");
    });
    await this.loop;
  }

  private async retryUntilStream(): Promise<void> {
    while (!this.stopped) {
      await sleep(this.options.settings.streamRetryMs, {
        onWake: (wake) => (this.wake = wake),
      });
      if (this.stopped) return;
      try {
        await this.ensureConsumer();
        return await this.consume();
      } catch (error) {
        if (!isStreamNotFound(error))
          this.log.error({ err: error }, "cannot create the observation consumer");
      }
    }
  }

  private async ensureConsumer(): Promise<void> {
    const { bus, hook, policy, settings } = this.options;
    const stream = bus.subjects.logStream;
    // Every outcome of the hook: refusals are observations filed under `block`
    // (log/observation-outcome.ts); the hook's error records are skipped in `handle`.
    const shape = observerDurableShape(bus.subjects, hook);
    try {
      const info = await bus.jsm.consumers.info(stream, this.durable);
      // The keep-alive follows the ack wait of the consumer as it is on the server.
      if (info.config.ack_wait !== undefined && info.config.ack_wait > 0)
        this.ackWaitMs = info.config.ack_wait / 1_000_000;
      // A consumer made before refusals were filed under `block` (`….observed`) is widened once;
      // where older credentials cannot, it is kept as it is (refusals are then not delivered).
      const legacy = observerDurableShape(bus.subjects, hook, "observed");
      if (info.config.filter_subject === legacy.filter_subject && !(await this.widen(shape))) {
        return await assertDurableShape(bus.jsm, stream, this.durable, legacy);
      }
      // Used as it is if it is the one this observer creates; someone else's is refused.
      return await assertDurableShape(bus.jsm, stream, this.durable, shape);
    } catch (error) {
      if (!isConsumerNotFound(error)) throw error;
    }
    const config: Partial<ConsumerConfig> = {
      ...shape,
      durable_name: this.durable,
      description: `hookbus: ${hook} observations for policy ${policy.name}`,
      ack_wait: nanos(settings.ackWaitMs),
      max_deliver: settings.maxDeliver,
      max_ack_pending: 1000,
    };
    try {
      await bus.jsm.consumers.add(stream, config);
      this.log.info("created observation consumer");
    } catch (error) {
      // Another worker of the policy created it first: fine, as long as it exists now.
      await bus.jsm.consumers.info(stream, this.durable).catch(() => {
        throw error;
      });
    }
    await assertDurableShape(bus.jsm, stream, this.durable, shape);
  }

  private async consume(): Promise<void> {
    const { bus, inFlight, batch } = this.options;
    try {
      const consumer = await bus.js.consumers.get(bus.subjects.logStream, this.durable);
      if (this.stopped) return;
      const messages = await consumer.consume({ max_messages: batch });
      this.messages = messages;
      if (this.stopped) {
        await messages.close();
        return;
      }
      for await (const msg of messages) {
        if (this.stopped) break; // left unacked: the server redelivers it to another worker
        await inFlight.run(() => this.handle(msg));
      }
    } catch (error) {
      if (!this.stopped) this.log.error({ err: error }, "observation consumer stopped");
    }
  }

  /** Widen an observer's consumer to every outcome of its hook; false when the server refuses. */
  private async widen(shape: DurableShape): Promise<boolean> {
    const { bus } = this.options;
    const filter = shape.filter_subject;
    try {
      await bus.jsm.consumers.update(bus.subjects.logStream, this.durable, {
        filter_subject: filter,
      });
      this.log.info({ filter }, "observation consumer widened to every outcome of its hook");
      return true;
    } catch (error) {
      this.log.warn(
        { err: error, filter },
        "cannot widen the observation consumer (regenerate the worker's credentials: hookbus auth); refusals filed under block are not delivered to it",
      );
      return false;
    }
  }

  private async handle(msg: JsMsg): Promise<void> {
    const { bus, policy, hook, state, hardStop, settings } = this.options;
    // A slow handler must not look like a dead one: tell the server we are still working.
    const keepAlive = setInterval(() => msg.working(), Math.max(100, this.ackWaitMs / 2));
    try {
      if (!isObservationSubject(bus, msg.subject)) {
        msg.ack(); // the hook's error records share its subjects: nothing to deliver
        return;
      }
      let record: ObservationRecord;
      try {
        record = ObservationRecord.parse(await bus.codec.decodeMessage(msg));
      } catch (error) {
        this.log.error({ err: error, seq: msg.seq }, "unreadable observation record; dropped");
        msg.term();
        return;
      }
      if (record.hook !== hook) {
        this.log.error(
          { seq: msg.seq, recordHook: record.hook },
          "observation record on the wrong subject; dropped",
        );
        msg.term();
        return;
      }
      const result = await invokePolicy(policy, hook, record.event, record.context, {
        callId: record.eventId,
        state,
        logger: bus.logger,
        signal: hardStop,
      });
      if (result.status === "ok") {
        await msg
          .ackAck()
          .catch((error: unknown) =>
            this.log.warn({ err: error, seq: msg.seq }, "ack not confirmed; may be redelivered"),
          );
      } else if (result.error !== undefined && TERMINAL_CODES.has(result.error.code)) {
        this.log.error(
          { seq: msg.seq, error: result.error },
          "observation can never be handled; dropped",
        );
        msg.term();
      } else {
        const delay = Math.round(
          backoffMs(msg.info.deliveryCount - 1, {
            firstMs: settings.retryDelayMs,
            capMs: settings.maxRetryDelayMs,
          }),
        );
        this.log.warn(
          { seq: msg.seq, error: result.error, retryInMs: delay },
          "observation handler failed; will retry",
        );
        msg.nak(delay);
      }
    } catch (error) {
      // Not expected (invokePolicy does not throw); never leave a record without an answer.
      this.log.error({ err: error, seq: msg.seq }, "observation handling failed");
      try {
        msg.nak(settings.retryDelayMs);
      } catch {
        // connection closed: the server redelivers after ack_wait anyway
      }
    } finally {
      clearInterval(keepAlive);
    }
  }
}

/** Observations are filed under `observed`, or `block` for refusals (log/observation-outcome.ts). */
function isObservationSubject(bus: Bus, subject: string): boolean {
  try {
    const kind = bus.subjects.parseAudit(subject).kind;
    return kind === "observed" || kind === "block";
  } catch {
    return true; // not ours to judge here: the record's own check below drops it
  }
}
