/**
 * Moving a connection off a NATS node that is about to stop. An operator stops a node by putting
 * it in lame-duck mode first (`nats-server --signal ldm=<pid>`, or SIGUSR2): the node hands its
 * Raft leaderships away and tells its clients (the `ldm` status), then closes them after its grace
 * period. A client that waits to be closed loses whatever was in flight on its connection at that
 * moment — and nats.js also drops what it publishes before it is connected again. A client that
 * moves by itself first can do it cleanly:
 *
 * 1. `pause`: stop taking work (a queue-group subscription drained: the server hands new requests
 *    to the other members) and wait for the work in hand to be answered — bounded by maxPauseMs;
 * 2. flush, so every answer has reached the node;
 * 3. reconnect: the node in lame-duck mode accepts no new connection, so the client lands on
 *    another one;
 * 4. `resume`: take work again, now through the new node.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { settlesWithin } from "../foundation/deadline.js";
import { ConnectionWatch } from "./connection-watch.js";

/** How long a move waits for the work in hand, and then for the new connection. */
export const DEFAULT_MAX_PAUSE_MS = 5_000;

export interface LameDuckMoveOptions {
  /** Stop taking new work and resolve once the work in hand is answered. */
  pause: () => Promise<void>;
  /** Take work again (the connection has moved, or the move gave up). */
  resume: () => void;
  logger: Logger;
  /** Bound on `pause`, and again on the reconnect (default 5 s). */
  maxPauseMs?: number;
}

/** Moves `nc` to another node whenever its node enters lame-duck mode; returns `stop`. */
export function moveOnLameDuck(nc: NatsConnection, options: LameDuckMoveOptions): () => void {
  let moving: Promise<void> | undefined;
  return ConnectionWatch.of(nc).onChange((change) => {
    if (change !== "lame-duck" || moving !== undefined) return;
    moving = move(nc, nc.getServer(), options).finally(() => (moving = undefined));
  });
}

async function move(nc: NatsConnection, server: string, options: LameDuckMoveOptions) {
  const { logger } = options;
  const maxMs = options.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS;
  const started = Date.now();
  logger.info({ server }, "NATS node entering lame-duck mode: moving to another node");
  const paused = await settlesWithin(options.pause(), maxMs);
  if (!paused) logger.warn({ server, maxMs }, "moving with work still in hand");
  if (nc.isClosed() || nc.isDraining()) return;
  const back = ConnectionWatch.of(nc).nextReconnect();
  try {
    await settlesWithin(nc.flush(), maxMs);
    await nc.reconnect();
    if (await settlesWithin(back.promise, maxMs)) {
      logger.info({ from: server, ms: Date.now() - started }, "moved off the lame-duck NATS node");
    } else {
      // The client keeps trying by itself; the subscriptions are re-sent when it gets through.
      logger.warn({ server, maxMs }, "no other NATS node accepted the connection yet");
    }
  } catch (error) {
    logger.warn({ err: error, server }, "could not move off the lame-duck NATS node");
  } finally {
    back.cancel();
    options.resume();
  }
}
