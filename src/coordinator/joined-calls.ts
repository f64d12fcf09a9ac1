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
import { afterTimeoutMs, leadingCallId } from "../bus/body-deadline.js";

/** Requests one call may gather; more re-sends than this are answered by their own run. */
const MAX_JOINED = 16;

interface Running {
  leader: Msg;
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
    const callId = callIdOf(msg);
    if (callId === undefined) return { msg, done: () => {} };
    const key = `${msg.subject} ${callId}`;
    // Two sends of one call differ in the deadline left (in the body since protocol 2) only.
    const data = msg.data.subarray(afterTimeoutMs(msg.data));
    const current = this.running.get(key);
    if (current !== undefined) {
      if (sameBytes(current.data, data) && current.joined.length < MAX_JOINED) {
        if (current.joined.length === 0) answerJoinedToo(current);
        current.joined.push(msg);
        return undefined;
      }
      return { msg, done: () => {} };
    }
    this.running.set(key, { leader: msg, data, joined: [] });
    return { msg, done: () => this.running.delete(key) };
  }
}

/**
 * The call id: in the `Hookbus-Call-Id` header (gzip and blob bodies, agents before protocol 2),
 * else read from the body's first bytes as the agent SDK writes them (bus/body-deadline.ts).
 * A plain message has no header block, and none is decoded for it.
 */
function callIdOf(msg: Msg): string | undefined {
  const headers = msg.headers;
  const fromHeader = headers === undefined ? "" : headers.get(Header.CallId);
  return fromHeader === "" ? leadingCallId(msg.data) : fromHeader;
}

/**
 * From the first join on, the leader's `respond` answers every joined request too. Done only
 * then (re-sends are rare): wrapping every request would cost each call an object whose
 * prototype is the message (hot path rule 2: foundation/hot-path.ts).
 */
function answerJoinedToo(entry: Running): void {
  const { leader, joined } = entry;
  const respond = leader.respond.bind(leader);
  leader.respond = (data?: Uint8Array, options?: PublishOptions) => {
    for (const request of joined) request.respond(data, options);
    return respond(data, options);
  };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
