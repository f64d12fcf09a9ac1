/**
 * One agent call over NATS: request on `<ns>.call.<agent>.<hook>`, answered by a coordinator of
 * the queue group with the merged decision (sent only after its log record is stored) or with an
 * error reply (`Hookbus-Error-Code` header). See docs/protocol.md.
 */
import type { Msg } from "@nats-io/transport-node";
import type { Decision, HookContext, HookEvent, ModifyingHookName } from "../catalog/catalog.js";
import { parseDecision } from "../catalog/validate.js";
import type { Bus } from "../bus/bus.js";
import type { EncodedBody } from "../bus/codec.js";
import { withDeadline } from "../bus/body-deadline.js";
import { WireError, type CallRequest } from "../bus/envelope.js";
import { callReplyValidator } from "../bus/compiled-validators.js";
import { Header } from "../bus/headers.js";
import { ErrorCodes, HookbusError, type ErrorCode } from "../foundation/errors.js";
import { beforeDeadline } from "../foundation/deadline.js";
import { requestWithResend } from "./resend.js";
import { isPromise, type MaybePromise } from "../foundation/hot-path.js";

export { requestWithResend, type ResendRequest } from "./resend.js";

export interface RemoteDecision<H extends ModifyingHookName> {
  decision: Decision<H>;
  registryRevision: number;
  recordSeq: number;
}

/** Where round trips go. The NATS implementation is below; the client only knows this shape. */
export interface CallTransport {
  call<H extends ModifyingHookName>(
    hook: H,
    context: HookContext<H>,
    event: HookEvent<H>,
    callId: string,
    deadline: number,
  ): Promise<RemoteDecision<H>>;
}

export class NatsCallTransport implements CallTransport {
  constructor(private readonly bus: Bus) {}

  async call<H extends ModifyingHookName>(
    hook: H,
    context: HookContext<H>,
    event: HookEvent<H>,
    callId: string,
    deadline: number,
  ): Promise<RemoteDecision<H>> {
    const { bus } = this;
    const subject = bus.subjects.call(context.agentId, hook);
    const body: CallRequest = { callId, hook, context, event };
    const details = { hook, callId };
    // Large events go to the blob stream here; that write counts against the same deadline.
    // A small body is encoded at once: no deadline timer for work that is already done.
    const now = encode(bus, body);
    const encoded = isPromise(now)
      ? await beforeDeadline(
          now,
          deadline,
          "HOOKBUS_CALL_TIMEOUT",
          () => `${hook} call ${callId}: the deadline passed while storing its large event`,
          details,
        )
      : now;

    const reply = await requestWithResend(bus.nc, {
      subject,
      // The same callId on every attempt: the coordinator and the log see one call. The time
      // left is written into a plain body (protocol 2), so no header block is sent; a gzip or
      // blob body says it and the call id in headers (the coordinator names an unreadable
      // body's error record by them).
      wire: (remaining) => withDeadline(encoded, remaining, { [Header.CallId]: callId }),
      deadline,
      what: `${hook} call ${callId}`,
      details,
      hint: `; is a coordinator running on namespace "${bus.subjects.namespace}"?`,
      logger: bus.logger,
    });
    return this.readReply(hook, callId, reply, deadline);
  }

  private async readReply<H extends ModifyingHookName>(
    hook: H,
    callId: string,
    msg: Msg,
    deadline: number,
  ): Promise<RemoteDecision<H>> {
    const details = { hook, callId };
    const errorCode = msg.headers?.get(Header.ErrorCode) ?? "";
    if (errorCode !== "") throw await remoteError(this.bus, hook, callId, errorCode, msg);

    const now = this.bus.codec.decodeMessageNow(msg, { deadline });
    const parsed = callReplyValidator().safeParse(isPromise(now) ? await now : now);
    if (!parsed.success) {
      throw new HookbusError(
        "HOOKBUS_BAD_MESSAGE",
        `${hook} call ${callId}: the coordinator's reply is not a CallReply: ${parsed.error.message}`,
        details,
      );
    }
    const reply = parsed.data;
    if (reply.callId !== callId || reply.hook !== hook) {
      throw new HookbusError(
        "HOOKBUS_BAD_MESSAGE",
        `${hook} call ${callId}: got the reply of another call (${reply.hook} ${reply.callId})`,
        details,
      );
    }
    return {
      decision: parseDecision(hook, reply.decision),
      registryRevision: reply.registryRevision,
      recordSeq: reply.recordSeq,
    };
  }
}

/** The body now when it stays inline; a promise when it goes to the blob stream. */
function encode(bus: Bus, body: CallRequest): MaybePromise<EncodedBody> {
  const now = bus.codec.encodeNow(body);
  if (!isPromise(now)) return now;
  return now.catch((error: unknown) => {
    if (error instanceof HookbusError) throw error;
    throw new HookbusError(
      "HOOKBUS_LOG_UNAVAILABLE",
      `${body.hook} call ${body.callId}: could not store the large event in the blob stream: ${String(error)}`,
      { hook: body.hook, callId: body.callId },
      error,
    );
  });
}

/** An error reply: the header's code is authoritative; the body adds the message and details. */
export async function remoteError(
  bus: Bus,
  hook: string,
  callId: string,
  headerCode: string,
  msg: Msg,
): Promise<HookbusError> {
  let message = `the coordinator answered ${headerCode}`;
  let details: Record<string, unknown> = {};
  try {
    const body = WireError.safeParse(await bus.codec.decodeMessage(msg));
    if (body.success) {
      message = body.data.message;
      details = body.data.details ?? {};
    }
  } catch {
    // The code in the header is enough to act on; a broken body must not hide it.
  }
  const known = Object.hasOwn(ErrorCodes, headerCode);
  const code: ErrorCode = known ? (headerCode as ErrorCode) : "HOOKBUS_INTERNAL";
  return new HookbusError(
    code,
    known
      ? message
      : `${message} (unknown code ${headerCode}: is this SDK older than the coordinator?)`,
    { ...details, hook, callId, remote: true, ...(known ? {} : { remoteCode: headerCode }) },
  );
}
