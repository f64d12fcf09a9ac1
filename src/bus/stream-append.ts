/**
 * A JetStream publish over the connection's shared reply inbox (src/bus/reply-inbox.ts) instead
 * of `js.publish`, which goes through nats.js's `request()` and its per-request error stacks. The
 * protocol is JetStream's own: a message to a subject the stream captures, with `Nats-Msg-Id`
 * for de-duplication; the stream answers with a PubAck (`{stream, seq, duplicate?}`) or
 * `{error: {code, err_code, description}}`.
 */
import type { MsgHdrs, NatsConnection } from "@nats-io/transport-node";
import { ReplyInbox } from "./reply-inbox.js";

export interface StreamAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/** JetStream refused the message (the stream's error code and description). */
export class StreamAppendError extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
    readonly errCode: number | undefined,
  ) {
    super(message);
    this.name = "StreamAppendError";
  }
}

const MSG_ID = "Nats-Msg-Id";

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
    throw new StreamAppendError(`unreadable JetStream ack: ${String(error)}`, undefined, undefined);
  }
  if (ack.error !== undefined) {
    throw new StreamAppendError(
      `JetStream refused the message: ${ack.error.description ?? "no description"}`,
      ack.error.code,
      ack.error.err_code,
    );
  }
  if (typeof ack.stream !== "string" || typeof ack.seq !== "number") {
    throw new StreamAppendError("JetStream ack without stream and seq", undefined, undefined);
  }
  return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true };
}
