/**
 * NATS for the integration tests: one server per test file, connections that survive a server
 * restart, and a namespace per test (so tests on one server never see each other's subjects,
 * streams or buckets).
 */
import { randomBytes } from "node:crypto";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll } from "vitest";
import { findNatsServer, type NatsServerHandle } from "../../src/testing/nats.js";

const NAMESPACE = /^[a-z0-9][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)*$/;

/** `<prefix>-<12 hex digits>`, checked to be a valid hookbus namespace. */
export function uniqueNamespace(prefix = "p"): string {
  const namespace = `${prefix}-${randomBytes(6).toString("hex")}`;
  if (!NAMESPACE.test(namespace)) throw new Error(`bad test namespace ${namespace}`);
  return namespace;
}

/** A connection that keeps trying, quickly, when the server goes away (tests may restart it). */
export function connectTo(url: string, name?: string): Promise<NatsConnection> {
  return connect({
    servers: url,
    ...(name === undefined ? {} : { name }),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
}

export interface FileNatsServer {
  /** The server's URL (only inside tests and hooks, once the server is up). */
  url(): string;
  /** The server itself, e.g. to restart it (only inside tests and hooks). */
  handle(): NatsServerHandle;
  /** A new connection (connectTo) that is closed after the file, before the server stops. */
  connect(name?: string): Promise<NatsConnection>;
}

/**
 * Spawn (or find) one NATS server for the test file, in `beforeAll`; after the file, close the
 * connections made with `connect()` and stop the server. Call it before the file's own `afterAll`
 * hooks: after-hooks run in reverse order, so the file's clean-up runs while NATS is still up.
 *
 * `own`: the file kills or restarts its server, so it must own it (never someone's NATS_URL).
 * `hookTimeoutMs`: the timeout of these hooks (default: the configured hookTimeout).
 */
export function useNatsServer(
  options: { own?: boolean; hookTimeoutMs?: number } = {},
): FileNatsServer {
  let server: NatsServerHandle | undefined;
  const connections: NatsConnection[] = [];
  beforeAll(async () => {
    server = await findNatsServer(options.own === true ? { own: true } : undefined);
  }, options.hookTimeoutMs);
  afterAll(async () => {
    await Promise.all(connections.splice(0).map((c) => c.close()));
    await server?.stop();
    server = undefined;
  }, options.hookTimeoutMs);
  const handle = () => {
    if (server === undefined) throw new Error("no NATS server: call useNatsServer() in the file");
    return server;
  };
  return {
    url: () => handle().url,
    handle,
    async connect(name?: string) {
      const nc = await connectTo(handle().url, name);
      connections.push(nc);
      return nc;
    },
  };
}
