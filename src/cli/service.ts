/**
 * The life of a long-running command (coordinator, worker): start it, serve until SIGTERM/SIGINT,
 * drain. A failure to start closes the connection (an open connection would keep the process
 * alive after the error is printed), and a connection that closes by itself is fatal: exit 1,
 * so a supervisor restarts the service instead of leaving a process that serves nothing.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import {
  openServiceHttp,
  type ObservableService,
  type ServiceHttp,
} from "../observability/service-http.js";
import { connectNatsWithRetry, connectWaitMs, type ConnectionFlags } from "../bus/connect.js";
import { onShutdown } from "./shutdown.js";

export interface ServiceLife<T> {
  nc: NatsConnection;
  logger: Logger;
  start(): Promise<T>;
  stop(started: T): Promise<void>;
  /** `--http` endpoints, opened before connecting: attached once started, closed at the end. */
  http?: ServiceHttp;
}

export async function runService<T extends ObservableService>(
  life: ServiceLife<T>,
): Promise<number> {
  const { nc, logger } = life;
  let started: T;
  try {
    started = await life.start();
  } catch (error) {
    // The start's error is the one to report; a failing close on the way out adds nothing.
    await nc.close().catch(() => undefined);
    await life.http?.close();
    throw error;
  }
  life.http?.attach(started);
  let draining = false;
  let drainFailed = false;
  const drained = onShutdown(logger, async () => {
    draining = true;
    try {
      await life.stop(started);
      await nc.drain();
    } catch (error) {
      drainFailed = true;
      throw error;
    } finally {
      // A drain that fails (NATS already gone, as when a whole deployment stops at once) must not
      // leave a reconnecting connection or the HTTP server keeping the process alive.
      if (!nc.isClosed()) await nc.close().catch(() => undefined);
      await life.http?.close();
    }
  }).then(() => (drainFailed ? 1 : 0));
  const lost = nc.closed().then(async (error) => {
    if (draining) return drained;
    logger.fatal({ err: error }, "the NATS connection closed: exiting");
    await life.http?.close();
    return 1;
  });
  return Promise.race([drained, lost]);
}

export interface ServiceStartFlags extends ConnectionFlags {
  http?: string | undefined;
  "connect-wait"?: string | undefined;
}

/**
 * A service's first steps: open its `--http` endpoints (so liveness passes while NATS is awaited),
 * then connect, retrying for `--connect-wait`. The endpoints are closed again if NATS never comes:
 * an open server would keep the process alive after the error is printed.
 */
export async function openService(
  flags: ServiceStartFlags,
  name: string,
  logger: Logger,
): Promise<{ nc: NatsConnection; http: ServiceHttp }> {
  const http = await openServiceHttp(flags.http, logger);
  const waitMs = connectWaitMs(flags["connect-wait"]);
  const nc = await connectNatsWithRetry({ ...flags, name }, { waitMs, logger }).catch(
    async (error: unknown) => {
      await http.close();
      throw error;
    },
  );
  return { nc, http };
}
