/**
 * Asks the worker under test directly, as a coordinator would, and keeps *every* reply that comes
 * back within a window: a worker that answers twice, or after the deadline, is seen doing so.
 */
import { createInbox, headers as natsHeaders, type MsgHdrs } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import { Header } from "../bus/headers.js";

export interface Reply {
  /** The server's status on a reply with no body (503: nobody subscribed); absent on replies. */
  status?: number;
  /** ms after the request was sent. */
  atMs: number;
  errorHeader: string | undefined;
  /** The decoded body, or the decoding failure. */
  body: unknown;
  decodeError?: string;
  /** The bytes as sent, and their `Hookbus-Encoding` (absent: plain JSON). */
  data?: Uint8Array;
  encoding?: string;
}

export interface Ask {
  hook: string;
  /** A JSON body (encoded like a coordinator does: gzip or blob when large), or raw bytes. */
  body?: unknown;
  raw?: { data: Uint8Array; encoding?: string; headers?: Record<string, string> };
  /** Hookbus-Timeout-Ms; absent: no deadline header. */
  timeoutMs?: number;
  /** How long to collect replies (default: the deadline plus 500 ms, or 3 s). */
  windowMs?: number;
  /** Stop collecting after this many replies (default: collect the whole window). */
  stopAfter?: number;
  /**
   * After the first reply, keep listening this long for a second one (a worker answering twice),
   * then stop (default 300 ms; the window still bounds it).
   */
  graceMs?: number;
}

export class Probe {
  constructor(
    private readonly bus: Bus,
    readonly policy: string,
  ) {}

  subject(hook: string): string {
    return `${this.bus.subjects.namespace}.policy.${this.policy}.${hook}`;
  }

  async ask(ask: Ask): Promise<Reply[]> {
    const { bus } = this;
    const inbox = createInbox();
    const replies: Reply[] = [];
    const windowMs = ask.windowMs ?? (ask.timeoutMs === undefined ? 3000 : ask.timeoutMs + 500);
    let sentAt = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const pending: Promise<void>[] = [];
    const sub = bus.nc.subscribe(inbox, {
      callback: (_error, msg) => {
        const atMs = performance.now() - sentAt;
        if (msg.data.length === 0 && (msg.headers?.code ?? 0) >= 400) {
          // The server says nobody is subscribed: not an answer of the worker.
          replies.push({
            atMs,
            status: msg.headers!.code,
            errorHeader: undefined,
            body: undefined,
          });
          return;
        }
        const errorHeader = msg.headers?.get(Header.ErrorCode) || undefined;
        const sent = { data: msg.data, encoding: msg.headers?.get(Header.Encoding) || undefined };
        pending.push(
          bus.codec.decodeMessage(msg, { record: true }).then(
            (body) => void replies.push({ atMs, errorHeader, body, ...sent }),
            (error: unknown) =>
              void replies.push({
                atMs,
                errorHeader,
                body: undefined,
                decodeError: String(error),
                ...sent,
              }),
          ),
        );
        if (ask.stopAfter !== undefined && pending.length >= ask.stopAfter) done();
        if (pending.length === 1) grace = setTimeout(done, ask.graceMs ?? 300);
      },
    });
    const timer = setTimeout(done, windowMs);
    let grace: NodeJS.Timeout | undefined;
    try {
      const { data, hdrs } = await this.encode(ask);
      sentAt = performance.now();
      bus.nc.publish(this.subject(ask.hook), data, { reply: inbox, headers: hdrs });
      await finished;
    } finally {
      clearTimeout(timer);
      clearTimeout(grace);
      sub.unsubscribe();
    }
    await Promise.all(pending);
    return replies.sort((a, b) => a.atMs - b.atMs);
  }

  private async encode(ask: Ask): Promise<{ data: Uint8Array; hdrs: MsgHdrs }> {
    const hdrs = natsHeaders();
    if (ask.timeoutMs !== undefined) hdrs.set(Header.TimeoutMs, String(ask.timeoutMs));
    if (ask.raw !== undefined) {
      for (const [name, value] of Object.entries(ask.raw.headers ?? {})) hdrs.set(name, value);
      if (ask.raw.encoding !== undefined) hdrs.set(Header.Encoding, ask.raw.encoding);
      return { data: ask.raw.data, hdrs };
    }
    const encoded = await this.bus.codec.encode(ask.body);
    if (encoded.encoding !== "json") hdrs.set(Header.Encoding, encoded.encoding);
    return { data: encoded.data, hdrs };
  }
}
