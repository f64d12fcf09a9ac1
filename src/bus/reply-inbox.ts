/**
 * Request/reply over ONE wildcard inbox subscription per connection, for every request this
 * process makes on the decision path (agent calls, JetStream appends), as the coordinator's
 * policy asker does for verdicts. nats.js 3.4.0's `request()` builds two `RequestError`s with
 * captured stacks for every request, even a successful one (docs/performance.md); here a request
 * is a map entry and a timer, and an error object exists only when something failed.
 *
 * Failures are reported as `nc.request` reports them, so callers keep one error vocabulary:
 * `TimeoutError` when no reply came in time, a `RequestError` caused by `NoRespondersError` when
 * the server knows no subscriber, the client's own error when the connection is closed.
 *
 * A request whose responder de-duplicates (a JetStream append carries its message id) may ask to
 * be re-sent (`resend`): with the same reply token, when the connection comes back — what was in
 * flight or published while it was down is lost — and while no reply came, every `everyMs` (a
 * stream leader that steps down drops the proposals it had not committed). The first reply wins.
 */
import {
  ClosedConnectionError,
  createInbox,
  NoRespondersError,
  RequestError,
  TimeoutError,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from "@nats-io/transport-node";
import { ConnectionWatch } from "./connection-watch.js";
import { connectionInboxPrefix } from "./inbox.js";
import { HookbusError } from "../foundation/errors.js";

/** Requests awaiting a reply on one connection; past it a request fails at once. */
export const MAX_PENDING_REPLIES = 100_000;

export interface InboxRequestOptions {
  headers?: MsgHdrs;
  /** Milliseconds to wait for the reply. */
  timeout: number;
  /**
   * Re-send on reconnect, and every `everyMs` (default: never) while no reply came. Only for
   * requests the responder de-duplicates: it may see the request more than once.
   */
  resend?: { everyMs?: number };
}

/** What a re-sent request publishes again. */
interface Resend {
  data: Uint8Array;
  headers: MsgHdrs | undefined;
  timer: NodeJS.Timeout | undefined;
}

interface Pending {
  resolve: (msg: Msg) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  subject: string;
  resend?: Resend;
}

const inboxes = new WeakMap<NatsConnection, ReplyInbox>();

export class ReplyInbox {
  private readonly prefix: string;
  private readonly pending = new Map<string, Pending>();
  private readonly subscription: Subscription;
  private counter = 0;

  /** The connection's shared inbox, subscribed on first use (`maxPending` applies then). */
  static of(nc: NatsConnection, maxPending = MAX_PENDING_REPLIES): ReplyInbox {
    let inbox = inboxes.get(nc);
    if (inbox === undefined) {
      inbox = new ReplyInbox(nc, maxPending);
      inboxes.set(nc, inbox);
    }
    return inbox;
  }

  private constructor(
    private readonly nc: NatsConnection,
    private readonly maxPending: number,
  ) {
    // Under the connection's inbox prefix, so NATS permissions that confine each role to its
    // own `_INBOX_<ns>.<role>.<id>` cover these replies too.
    this.prefix = createInbox(connectionInboxPrefix(nc));
    this.subscription = nc.subscribe(`${this.prefix}.*`, {
      callback: (error, msg) => {
        if (error === null) this.onReply(msg);
      },
    });
    const stopWatching = ConnectionWatch.of(nc).onChange((change) => {
      if (change === "reconnect") this.resendAll();
    });
    void nc.closed().then(() => {
      stopWatching();
      this.failAll(new ClosedConnectionError());
    });
  }

  request(subject: string, data: Uint8Array, options: InboxRequestOptions): Promise<Msg> {
    if (this.pending.size >= this.maxPending) {
      return Promise.reject(
        new HookbusError(
          "HOOKBUS_INBOX_FULL",
          `${this.pending.size} requests on this connection are already waiting for replies`,
          { subject, max: this.maxPending },
        ),
      );
    }
    const token = (++this.counter).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        const entry = this.pending.get(token);
        if (entry === undefined) return;
        this.forget(token, entry);
        reject(new TimeoutError());
      }, options.timeout);
      const entry: Pending = { resolve, reject, timer, subject };
      if (options.resend !== undefined) {
        entry.resend = { data, headers: options.headers, timer: undefined };
        this.resendEvery(token, entry, options.resend.everyMs);
      }
      this.pending.set(token, entry);
      try {
        this.publish(token, entry, data, options.headers);
      } catch (error) {
        // Closed or draining connection, or a bad subject: as nc.request, fail the request.
        this.forget(token, entry);
        reject(error instanceof Error ? error : new RequestError(String(error)));
      }
    });
  }

  private publish(token: string, entry: Pending, data: Uint8Array, headers?: MsgHdrs): void {
    const reply = `${this.prefix}.${token}`;
    // One literal per case, no spread: every request (hot path: foundation/hot-path.ts).
    this.nc.publish(entry.subject, data, headers === undefined ? { reply } : { reply, headers });
  }

  /** While no reply came, publish the request again every `everyMs`. */
  private resendEvery(token: string, entry: Pending, everyMs: number | undefined): void {
    const resend = entry.resend;
    if (resend === undefined || everyMs === undefined || everyMs <= 0) return;
    resend.timer = setTimeout(() => {
      if (this.pending.get(token) !== entry) return;
      this.republish(token, entry);
      this.resendEvery(token, entry, everyMs);
    }, everyMs);
  }

  /** The connection is back: what was in flight may be lost with the old one. */
  private resendAll(): void {
    for (const [token, entry] of this.pending) this.republish(token, entry);
  }

  private republish(token: string, entry: Pending): void {
    if (entry.resend === undefined) return;
    try {
      this.publish(token, entry, entry.resend.data, entry.resend.headers);
    } catch {
      // Closed or draining: the request's own timer (or the close) settles it.
    }
  }

  private forget(token: string, entry: Pending): void {
    clearTimeout(entry.timer);
    if (entry.resend !== undefined) clearTimeout(entry.resend.timer);
    this.pending.delete(token);
  }

  /** Requests awaiting a reply now. */
  get size(): number {
    return this.pending.size;
  }

  private onReply(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length + 1);
    const entry = this.pending.get(token);
    if (entry === undefined) return; // timed out already (or answered): nobody waits for it
    this.forget(token, entry);
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      const cause = new NoRespondersError(entry.subject);
      entry.reject(new RequestError(cause.message, { cause }));
      return;
    }
    entry.resolve(msg);
  }

  private failAll(error: Error): void {
    for (const [token, entry] of this.pending) {
      this.forget(token, entry);
      entry.reject(error);
    }
    this.subscription.unsubscribe();
  }
}
