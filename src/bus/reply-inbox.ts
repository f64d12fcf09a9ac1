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
import { connectionInboxPrefix } from "./inbox.js";
import { HookbusError } from "../foundation/errors.js";

/** Requests awaiting a reply on one connection; past it a request fails at once. */
export const MAX_PENDING_REPLIES = 100_000;

export interface InboxRequestOptions {
  headers?: MsgHdrs;
  /** Milliseconds to wait for the reply. */
  timeout: number;
}

interface Pending {
  resolve: (msg: Msg) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  subject: string;
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
    void nc.closed().then(() => this.failAll(new ClosedConnectionError()));
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
        if (this.pending.delete(token)) reject(new TimeoutError());
      }, options.timeout);
      this.pending.set(token, { resolve, reject, timer, subject });
      try {
        this.nc.publish(subject, data, {
          reply: `${this.prefix}.${token}`,
          ...(options.headers === undefined ? {} : { headers: options.headers }),
        });
      } catch (error) {
        // Closed or draining connection, or a bad subject: as nc.request, fail the request.
        clearTimeout(timer);
        this.pending.delete(token);
        reject(error instanceof Error ? error : new RequestError(String(error)));
      }
    });
  }

  /** Requests awaiting a reply now. */
  get size(): number {
    return this.pending.size;
  }

  private onReply(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length + 1);
    const entry = this.pending.get(token);
    if (entry === undefined) return; // timed out already: nobody waits for it
    this.pending.delete(token);
    clearTimeout(entry.timer);
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      const cause = new NoRespondersError(entry.subject);
      entry.reject(new RequestError(cause.message, { cause }));
      return;
    }
    entry.resolve(msg);
  }

  private failAll(error: Error): void {
    for (const [token, entry] of this.pending) {
      clearTimeout(entry.timer);
      this.pending.delete(token);
      entry.reject(error);
    }
    this.subscription.unsubscribe();
  }
}
