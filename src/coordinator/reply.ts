import type { Msg } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import { optionalBodyHeaders } from "../bus/codec.js";
import { isPromise } from "../foundation/hot-path.js";

/**
 * Answer an agent's request. A large answer is stored as a blob of the calling agent (which may
 * read only its own blobs); without a reply subject there is no one to answer.
 */
export async function replyToAgent(
  bus: Bus,
  msg: Msg,
  body: unknown,
  extra: Record<string, string>,
  agentId: string | undefined,
): Promise<void> {
  if (msg.reply === undefined || msg.reply === "") return;
  const now = bus.codec.encodeNow(body, agentId === undefined ? {} : { agentId });
  const encoded = isPromise(now) ? await now : now;
  const headers = optionalBodyHeaders(encoded, extra);
  msg.respond(encoded.data, headers === undefined ? undefined : { headers });
}
