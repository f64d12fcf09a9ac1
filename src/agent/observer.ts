/**
 * Observational hooks go to the coordinators (request on `<ns>.observe.<agent>.<hook>`), which
 * validate, identity-check, redact and record them and answer with the record's sequence: agents
 * never write the log, so they need no JetStream permissions at all. Every attempt carries the
 * same eventId, and the coordinator stores it with a scoped de-duplication id, so a retry after a
 * lost answer, or the same event observed twice, is stored once (within the stream's duplicate
 * window). Failures are retried with backoff until the deadline and only then reported as
 * HOOKBUS_LOG_UNAVAILABLE: an observation is never silently dropped.
 */
import {
  ClosedConnectionError,
  DrainingConnectionError,
  RequestError,
  TimeoutError,
  type Msg,
} from "@nats-io/transport-node";
import type { HookContext, HookEvent, ObservationalHookName } from "../catalog/catalog.js";
import type { Bus } from "../bus/bus.js";
import { bodyHeaders, type EncodedBody } from "../bus/codec.js";
import { ObserveReply, type ObserveRequest } from "../bus/envelope.js";
import { Header } from "../bus/headers.js";
import { HookbusError } from "../errors.js";
import { sleep } from "../time.js";
import { pauseBeforeRetry } from "./deadline.js";
import { remoteError } from "./transport.js";

export interface ObserveResult {
  eventId: string;
  /** The record's sequence in the log stream (of the first copy, for a duplicate). */
  seq: number;
  /** True when the log already held this eventId: nothing new was stored. */
  duplicate: boolean;
  stream: string;
}

export class ObservationPublisher {
  constructor(private readonly bus: Bus) {}

  async publish<H extends ObservationalHookName>(
    hook: H,
    context: HookContext<H>,
    event: HookEvent<H>,
    eventId: string,
    deadline: number,
  ): Promise<ObserveResult> {
    const { bus } = this;
    const subject = bus.subjects.observe(context.agentId, hook);
    const stream = bus.subjects.logStream;
    const body: ObserveRequest = { eventId, hook, context, event };
    const started = Date.now();
    let encoded: EncodedBody | undefined;
    let lastError: unknown;

    for (let attempt = 0; ; attempt++) {
      const remaining = Math.floor(deadline - Date.now());
      if (remaining >= 1) {
        try {
          // Encoding may write blobs (JetStream) for a large event, so it is retried too.
          encoded ??= await bus.codec.encode(body);
          const reply = await bus.nc.request(subject, encoded.data, {
            timeout: remaining,
            headers: bodyHeaders(encoded, {
              [Header.CallId]: eventId,
              [Header.TimeoutMs]: String(remaining),
            }),
          });
          const stored = await this.readReply(hook, eventId, reply);
          return { eventId, seq: stored.recordSeq, duplicate: stored.duplicate, stream };
        } catch (error) {
          // Not retryable: a coded refusal, a body that can never fit, or a closed connection.
          if (error instanceof HookbusError) throw error;
          lastError = error;
          if (
            error instanceof ClosedConnectionError ||
            error instanceof DrainingConnectionError ||
            error instanceof TimeoutError ||
            bus.nc.isClosed()
          ) {
            throw unavailable(hook, eventId, stream, attempt + 1, started, error);
          }
          if (!(error instanceof RequestError))
            throw unavailable(hook, eventId, stream, attempt + 1, started, error);
          bus.logger.warn(
            { hook, eventId, attempt, err: error },
            "observation not stored yet (no coordinator answered); retrying",
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

  private async readReply(hook: string, eventId: string, msg: Msg): Promise<ObserveReply> {
    const code = msg.headers?.get(Header.ErrorCode) ?? "";
    if (code !== "") throw await remoteError(this.bus, hook, eventId, code, msg);
    const parsed = ObserveReply.safeParse(await this.bus.codec.decodeMessage(msg));
    if (!parsed.success || parsed.data.eventId !== eventId) {
      throw new HookbusError(
        "HOOKBUS_BAD_MESSAGE",
        `${hook} observation ${eventId}: the coordinator's answer is not its ObserveReply`,
        { hook, eventId },
      );
    }
    return parsed.data;
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
