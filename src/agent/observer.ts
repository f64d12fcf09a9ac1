/**
 * Observational hooks go straight to the log stream with JetStream (no coordinator): the agent
 * gets a PubAck once the record is stored. Each record is published with `msgID = observed.<eventId>`
 * (a prefix of its own, so no eventId can collide with the coordinator's `decision.<callId>`), so a
 * retry after a lost ack, or the same event observed twice, is stored once (within the stream's
 * duplicate window). Failures are retried with backoff until the deadline and only then reported
 * as HOOKBUS_LOG_UNAVAILABLE: an observation is never silently dropped.
 *
 * Like the coordinator's records, an observation is redacted by the registry's `redact` rules
 * (the client watches the registry) and linked into its session's hash chain (a compare-and-set
 * on the session's head in `<ns>_chain`) before it is published (docs/tamper-evidence.md).
 */
import { ClosedConnectionError, DrainingConnectionError } from "@nats-io/transport-node";
import type { HookContext, HookEvent, ObservationalHookName } from "../catalog/catalog.js";
import type { Bus } from "../bus/bus.js";
import { bodyHeaders, type EncodedBody } from "../bus/codec.js";
import { HookbusError } from "../errors.js";
import { chainKey, sameLink, type ChainKeeper } from "../log/chain.js";
import { LogRecord, RECORD_VERSION, type ObservationRecord } from "../log/record.js";
import { redactRecord, type RedactionRule } from "../log/redaction.js";
import { sleep } from "../time.js";
import { pauseBeforeRetry } from "./deadline.js";

export interface ObserveResult {
  eventId: string;
  /** The record's sequence in the log stream (of the first copy, for a duplicate). */
  seq: number;
  /** True when the log already held this eventId: nothing new was stored. */
  duplicate: boolean;
  stream: string;
}

export interface ObservationPublisherOptions {
  /** Links each observation into its session's hash chain; absent: records carry no chain. */
  chain?: ChainKeeper;
  /** The registry's redaction rules in force (read on every publish). */
  redaction?: () => readonly RedactionRule[] | undefined;
  /** Key of keyed hashes (HOOKBUS_REDACTION_KEY); must be the coordinators' key. */
  redactionKey?: string | undefined;
}

export class ObservationPublisher {
  constructor(
    private readonly bus: Bus,
    private readonly options: ObservationPublisherOptions = {},
  ) {}

  async publish<H extends ObservationalHookName>(
    hook: H,
    context: HookContext<H>,
    event: HookEvent<H>,
    eventId: string,
    deadline: number,
  ): Promise<ObserveResult> {
    const { bus } = this;
    const { chain } = this.options;
    const unredacted: ObservationRecord = {
      v: RECORD_VERSION,
      kind: "observation",
      eventId,
      hook,
      context,
      event,
      // Set once: every retry publishes the same record.
      publishedAt: new Date().toISOString(),
    };
    const record = redactRecord(unredacted, this.options.redaction?.(), {
      key: this.options.redactionKey,
    });
    const key = chainKey(context.agentId, context.sessionKey);
    const subject = bus.subjects.audit(context.agentId, context.sessionKey, hook, "observed");
    const stream = bus.subjects.logStream;
    const started = Date.now();
    let linked: ObservationRecord | undefined;
    let encoded: EncodedBody | undefined;
    let lastError: unknown;

    for (let attempt = 0; ; attempt++) {
      const remaining = Math.floor(deadline - Date.now());
      if (remaining >= 1) {
        try {
          // One chain position per observation, claimed once: every retry publishes that record.
          linked ??= chain === undefined ? record : await chain.claim(key, record, deadline);
          // Encoding may write blobs (JetStream) for a large event, so it is retried too.
          encoded ??= await bus.codec.encode(linked);
          const ack = await bus.js.publish(subject, encoded.data, {
            msgID: `observed.${eventId}`,
            headers: bodyHeaders(encoded),
            // Only the log stream may take it: a stray stream on the same subjects is a misconfiguration.
            expect: { streamName: stream },
            timeout: remaining,
          });
          if (ack.duplicate && chain !== undefined) {
            const stored = await this.read(ack.seq);
            // Our position holds no record: say why, so verify does not call it a removal.
            if (!sameLink(stored, linked)) await chain.voidPosition(key, linked, ack.seq);
          }
          return { eventId, seq: ack.seq, duplicate: ack.duplicate, stream: ack.stream };
        } catch (error) {
          // Not retryable: a body that can never fit, or a connection the caller closed.
          if (error instanceof HookbusError) throw error;
          lastError = error;
          if (
            error instanceof ClosedConnectionError ||
            error instanceof DrainingConnectionError ||
            bus.nc.isClosed()
          ) {
            throw unavailable(hook, eventId, stream, attempt + 1, started, error);
          }
          bus.logger.warn(
            { hook, eventId, attempt, err: error },
            "observation not stored yet; retrying",
          );
        }
      }
      const pause = pauseBeforeRetry(attempt, deadline, 500);
      if (pause === undefined) {
        throw unavailable(hook, eventId, stream, attempt + 1, started, lastError);
      }
      await sleep(pause);
    }
  }

  private async read(seq: number): Promise<LogRecord> {
    const msg = await this.bus.jsm.streams.getMessage(this.bus.subjects.logStream, { seq });
    if (msg === null) throw new Error(`log record ${seq} vanished`);
    return LogRecord.parse(
      await this.bus.codec.decodeMessage({ data: msg.data, headers: msg.header }),
    );
  }
}

function unavailable(
  hook: string,
  eventId: string,
  stream: string,
  attempts: number,
  started: number,
  cause: unknown,
): HookbusError {
  const why =
    cause === undefined ? "the deadline passed" : String((cause as Error)?.message ?? cause);
  return new HookbusError(
    "HOOKBUS_LOG_UNAVAILABLE",
    `${hook} observation ${eventId} was not stored in ${stream} ` +
      `(${attempts} attempts over ${Date.now() - started} ms): ${why}`,
    { hook, eventId, stream, attempts },
    cause,
  );
}
