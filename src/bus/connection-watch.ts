/**
 * What a request needs to know about its connection: is it up now, and has it dropped since the
 * request was sent. nats.js neither fails nor re-sends requests that were in flight when the
 * connection dropped — and it discards what was published while it was down (its outbound buffer
 * is reset at each reconnect) — so callers that must answer within a deadline watch for the
 * reconnect and re-send themselves (see requestWithResend in src/agent/resend.ts, the reply
 * inbox's `resend`, the coordinator's ask-again).
 */
import type { NatsConnection } from "@nats-io/transport-node";

/**
 * `reconnect`: this connection came back (on the same or another server). `cluster`: the server
 * told of a change in the cluster (a node left, came back, or entered lame-duck mode).
 * `lame-duck`: this connection's own server entered lame-duck mode (it will close it soon).
 */
export type ConnectionChange = "reconnect" | "cluster" | "lame-duck";

export class ConnectionWatch {
  private static readonly watches = new WeakMap<NatsConnection, ConnectionWatch>();

  /** One watch per connection, shared by every caller on it. */
  static of(nc: NatsConnection): ConnectionWatch {
    let watch = ConnectionWatch.watches.get(nc);
    if (watch === undefined) {
      watch = new ConnectionWatch(nc);
      ConnectionWatch.watches.set(nc, watch);
    }
    return watch;
  }

  private up = true;
  /** Counts disconnects: a request compares it before and after to learn it lived through one. */
  private drops = 0;
  /** Called once at the next reconnect; bounded by the requests in flight, each removes its own. */
  private readonly onReconnect = new Set<() => void>();
  /** Told of every change; one per component on the connection (inbox, asker), each removes its own. */
  private readonly listeners = new Set<(change: ConnectionChange) => void>();

  private constructor(nc: NatsConnection) {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === "disconnect") {
          this.up = false;
          this.drops++;
        } else if (status.type === "reconnect") {
          this.up = true;
          for (const wake of [...this.onReconnect]) wake();
          this.onReconnect.clear();
          this.tell("reconnect");
        } else if (status.type === "update") {
          this.tell("cluster");
        } else if (status.type === "ldm") {
          this.tell("lame-duck");
        }
      }
    })();
  }

  get connected(): boolean {
    return this.up;
  }

  get disconnects(): number {
    return this.drops;
  }

  /** Resolves at the next reconnect; `cancel` forgets the waiter (call it when done waiting). */
  nextReconnect(): { promise: Promise<void>; cancel: () => void } {
    let wake!: () => void;
    const promise = new Promise<void>((resolve) => (wake = resolve));
    this.onReconnect.add(wake);
    return { promise, cancel: () => this.onReconnect.delete(wake) };
  }

  /**
   * Calls `wake` once at the next reconnect, unless `forget(wake)` comes first: nextReconnect
   * without its promise and closures, for a waiter on every request.
   */
  wakeAtReconnect(wake: () => void): void {
    this.onReconnect.add(wake);
  }

  forget(wake: () => void): void {
    this.onReconnect.delete(wake);
  }

  /** Calls `listener` at every change until the returned function is called. */
  onChange(listener: (change: ConnectionChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private tell(change: ConnectionChange): void {
    for (const listener of [...this.listeners]) listener(change);
  }
}
