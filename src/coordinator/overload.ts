/**
 * The answer of a coordinator that already has its maximum of calls in flight: an error reply
 * with HOOKBUS_OVERLOADED, sent before reading the body and without a record (the call was not
 * handled). The agent SDK re-sends the call with the same id, and the queue group hands it to
 * some coordinator, eventually one with room, within the call's deadline.
 */
import type { Msg } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import { bodyHeaders } from "../bus/codec.js";
import { Header } from "../bus/headers.js";
import { HookbusError } from "../foundation/errors.js";

export async function refuseOverloaded(bus: Bus, msg: Msg, maxInFlight: number): Promise<void> {
  if (msg.reply === undefined || msg.reply === "") return;
  const error = new HookbusError(
    "HOOKBUS_OVERLOADED",
    `coordinator has ${maxInFlight} calls in flight (its maximum); try again`,
    { maxInFlight },
  );
  const encoded = await bus.codec.encode(error.toJSON());
  msg.respond(encoded.data, { headers: bodyHeaders(encoded, { [Header.ErrorCode]: error.code }) });
}
