/**
 * Re-sent calls join the one in flight. The agent SDK re-sends a call (same id, same body) when
 * its connection came back or an attempt's window ended; if this coordinator is still working on
 * it, a second run would ask the policies again and could answer differently (a policy that was
 * slow the first time is "unavailable" the second). Instead the re-sent request waits for the
 * first run's answer, which goes to every request that joined it.
 *
 * Keyed by subject (the agent's identity and hook) and call id, and joined only when the body is
 * byte-identical: anything else is a different call and runs on its own. Bounded by the calls in
 * flight (one key each) and by MAX_JOINED requests per call.
 */
import type { Msg, PublishOptions } from "@nats-io/transport-node";
import { Header } from "../bus/headers.js";

/** Requests one call may gather; more re-sends than this are answered by their own run. */
const MAX_JOINED = 16;

interface Running {
  data: Uint8Array;
  joined: Msg[];
}

export class JoinedCalls {
  private readonly running = new Map<string, Running>();

  /**
   * A request for a call already running here joins it (returns undefined: nothing to run);
   * otherwise the request to run, whose `respond` answers every request that joins meanwhile,
   * and a `done` to call when the run is over.
   */
  admit(msg: Msg): { msg: Msg; done: () => void } | undefined {
    const callId = msg.headers?.get(Header.CallId) ?? "";
    if (callId === "") return { msg, done: () => {} };
    const key = `${msg.subject} ${callId}`;
    const current = this.running.get(key);
    if (current !== undefined) {
      if (sameBytes(current.data, msg.data) && current.joined.length < MAX_JOINED) {
        current.joined.push(msg);
        return undefined;
      }
      return { msg, done: () => {} };
    }
    const entry: Running = { data: msg.data, joined: [] };
    this.running.set(key, entry);
    return { msg: answeringAll(msg, entry), done: () => this.running.delete(key) };
  }
}

function answeringAll(msg: Msg, entry: Running): Msg {
  // Delegates everything to the request itself; only `respond` fans out.
  const leader = Object.create(msg) as Msg;
  leader.respond = (data?: Uint8Array, options?: PublishOptions) => {
    for (const joined of entry.joined) joined.respond(data, options);
    return msg.respond(data, options);
  };
  return leader;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
