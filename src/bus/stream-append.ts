/**
 * A JetStream publish over the connection's shared reply inbox (src/bus/reply-inbox.ts) instead
 * of `js.publish`, which goes through nats.js's `request()` and its per-request error stacks. The
 * protocol is JetStream's own: a message to a subject the stream captures, with `Nats-Msg-Id`
 * for de-duplication; the stream answers with a PubAck (`{stream, seq, duplicate?}`) or
 * `{error: {code, err_code, description}}`, which becomes HOOKBUS_LOG_REFUSED (permanent or not).
 * The message id makes the append safe to re-send: it is re-sent at a reconnect and while no ack
 * came (APPEND_RESEND_MS), so a NATS node that leaves costs an append milliseconds, not its deadline.
 */
import type { MsgHdrs, NatsConnection } from "@nats-io/transport-node";
import { HookbusError, isHookbusError } from "../foundation/errors.js";
import { ReplyInbox } from "./reply-inbox.js";

export interface StreamAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/**
 * JetStream's error codes for refusals that no retry can change: the message or its headers are
 * over the stream's maximum, the stream is sealed, or the subject is not the stream's. Anything
 * else (no leader yet, the cluster or stream offline, resources short for a moment) may pass on a
 * later attempt within the caller's deadline.
 */
const PERMANENT_REFUSALS: ReadonlySet<number> = new Set([
  10054, // message size exceeds the stream's maximum
  10097, // headers exceed the maximum
  10109, // the stream is sealed
  10060, // the expected stream does not match
]);

/** JetStream refused the message: HOOKBUS_LOG_REFUSED with its codes, and whether for good. */
function refusal(description: string, jsCode?: number, errCode?: number): HookbusError {
  const permanent = errCode !== undefined && PERMANENT_REFUSALS.has(errCode);
  return new HookbusError("HOOKBUS_LOG_REFUSED", description, {
    ...(jsCode === undefined ? {} : { jsCode }),
    ...(errCode === undefined ? {} : { errCode }),
    permanent,
  });
}

/** Whether a failed append can never succeed as sent (retrying it only spends the deadline). */
export function isPermanentRefusal(error: unknown): boolean {
  return isHookbusError(error, "HOOKBUS_LOG_REFUSED") && error.details.permanent === true;
}

const MSG_ID = "Nats-Msg-Id";

/**
 * While no PubAck came, the append is published again this often (same message id, same reply
 * token: the stream's de-duplication stores it once, the first ack wins). A stream leader that
 * steps down, or a node that goes away, drops the proposals it had not committed without a word;
 * waiting out the whole attempt would cost the caller seconds. Also re-sent at every reconnect.
 */
export const APPEND_RESEND_MS = 500;

export async function appendToStream(
  nc: NatsConnection,
  subject: string,
  data: Uint8Array,
  options: { msgID: string; headers: MsgHdrs; timeout: number },
): Promise<StreamAck> {
  options.headers.set(MSG_ID, options.msgID);
  const reply = await ReplyInbox.of(nc).request(subject, data, {
    headers: options.headers,
    timeout: options.timeout,
    resend: { everyMs: APPEND_RESEND_MS },
  });
  return parseAck(reply.data);
}

export function parseAck(data: Uint8Array): StreamAck {
  type Ack = {
    stream?: unknown;
    seq?: unknown;
    duplicate?: unknown;
    error?: { code?: number; err_code?: number; description?: string };
  };
  let ack: Ack;
  try {
    const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8");
    ack = JSON.parse(text) as Ack;
  } catch (error) {
    throw refusal(`unreadable JetStream ack: ${String(error)}`);
  }
  if (ack.error !== undefined) {
    throw refusal(
      `JetStream refused the message: ${ack.error.description ?? "no description"}`,
      ack.error.code,
      ack.error.err_code,
    );
  }
  if (typeof ack.stream !== "string" || typeof ack.seq !== "number") {
    throw refusal("JetStream ack without stream and seq");
  }
  return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true };
}
