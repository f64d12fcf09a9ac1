/**
 * Asks the worker under test directly, as a coordinator would, and keeps *every* reply that comes
 * back within a window: a worker that answers twice, or after the deadline, is seen doing so.
 */
import { createInbox, headers as natsHeaders, type MsgHdrs } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import { bodyHeaders } from "../bus/codec.js";
import { withDeadline } from "../bus/body-deadline.js";
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
  /** The deadline; absent: none. */
  timeoutMs?: number;
  /**
   * Where a `body` ask says its deadline: `body` (default) as a coordinator of protocol 2 does
   * (`timeoutMs` leads a plain JSON body, no header block; a gzip or blob body's header), or
   * `header` as an older one did (`Hookbus-Timeout-Ms`). A `raw` ask's is always in the header:
   * its bytes are sent as given.
   */
  deadlineIn?: "body" | "header";
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
      bus.nc.publish(
        this.subject(ask.hook),
        data,
        hdrs === undefined ? { reply: inbox } : { reply: inbox, headers: hdrs },
      );
      await finished;
    } finally {
      clearTimeout(timer);
      clearTimeout(grace);
      sub.unsubscribe();
    }
    await Promise.all(pending);
    return replies.sort((a, b) => a.atMs - b.atMs);
  }

  private async encode(ask: Ask): Promise<{ data: Uint8Array; hdrs: MsgHdrs | undefined }> {
    const deadline: Record<string, string> =
      ask.timeoutMs === undefined ? {} : { [Header.TimeoutMs]: String(ask.timeoutMs) };
    if (ask.raw !== undefined) {
      const hdrs = natsHeaders();
      for (const [name, value] of Object.entries({ ...deadline, ...ask.raw.headers }))
        hdrs.set(name, value);
      if (ask.raw.encoding !== undefined) hdrs.set(Header.Encoding, ask.raw.encoding);
      return { data: ask.raw.data, hdrs };
    }
    const encoded = await this.bus.codec.encode(ask.body);
    if (ask.timeoutMs === undefined || ask.deadlineIn === "header")
      return { data: encoded.data, hdrs: bodyHeaders(encoded, deadline) };
    const wire = withDeadline(encoded, ask.timeoutMs);
    return { data: wire.data, hdrs: wire.headers };
  }
}
