/**
 * Observational hooks go to the coordinators (request on `<ns>.observe.<agent>.<hook>`), which
 * validate, identity-check, redact and record them and answer with the record's sequence: agents
 * never write the log, so they need no JetStream permissions at all. Every attempt carries the
 * same eventId, and the coordinator stores it with a scoped de-duplication id, so a retry after a
 * lost answer, or the same event observed twice, is stored once (within the stream's duplicate
 * window). Attempts are re-sent on reconnect and at growing windows until the deadline, and only
 * then reported as HOOKBUS_LOG_UNAVAILABLE: an observation is never silently dropped.
 */
import type { Msg } from "@nats-io/transport-node";
import type { HookContext, HookEvent, ObservationalHookName } from "../catalog/catalog.js";
import type { Bus } from "../bus/bus.js";
import { bodyHeaders, type EncodedBody } from "../bus/codec.js";
import { ObserveReply, type ObserveRequest } from "../bus/envelope.js";
import { Header } from "../bus/headers.js";
import { HookbusError } from "../foundation/errors.js";
import { requestWithResend } from "./resend.js";
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
    let encoded: EncodedBody;
    try {
      // Encoding may write blobs (JetStream) for a large event.
      encoded = await bus.codec.encode(body);
    } catch (error) {
      if (error instanceof HookbusError) throw error;
      throw unavailable(hook, eventId, stream, error);
    }
    // Re-sent on reconnect and at attempt windows with the same eventId (src/agent/resend.ts):
    // the coordinator's scoped de-duplication stores it once.
    const reply = await requestWithResend(bus.nc, {
      subject,
      wire: (remainingMs) => ({
        data: encoded.data,
        headers: bodyHeaders(encoded, {
          [Header.CallId]: eventId,
          [Header.TimeoutMs]: String(remainingMs),
        }),
      }),
      deadline,
      what: `${hook} observation ${eventId}`,
      details: { hook, eventId, stream },
      timeoutCode: "HOOKBUS_LOG_UNAVAILABLE",
      unavailableCode: "HOOKBUS_LOG_UNAVAILABLE",
      hint: `not stored in ${stream}: is a coordinator running in namespace ${bus.subjects.namespace}?`,
      logger: bus.logger,
    });
    const stored = await this.readReply(hook, eventId, reply);
    return { eventId, seq: stored.recordSeq, duplicate: stored.duplicate, stream };
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

function unavailable(hook: string, eventId: string, stream: string, cause: unknown): HookbusError {
  return new HookbusError(
    "HOOKBUS_LOG_UNAVAILABLE",
    `${hook} observation ${eventId} was not stored in ${stream}: ${String((cause as Error)?.message ?? cause)}`,
    { hook, eventId, stream },
    cause,
  );
}
