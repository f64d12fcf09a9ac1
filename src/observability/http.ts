/**
 * The operations endpoints of a coordinator or worker (`--http HOST:PORT`, env HOOKBUS_HTTP):
 * `/metrics` (Prometheus text format), `/healthz` (the process is alive) and `/readyz` (connected
 * to NATS and serving). Bound to the given host only; off unless asked for.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { HookbusError } from "../foundation/errors.js";

export interface Readiness {
  ready: boolean;
  reasons: string[];
}

export interface HttpEndpointsOptions {
  /** `HOST:PORT` (`[::1]:9464` for IPv6; port 0 picks a free one). */
  address: string;
  metrics: () => Registry | undefined;
  ready: () => Readiness;
}

export interface HttpEndpoints {
  /** `http://host:port` as bound (the real port when 0 was asked). */
  readonly url: string;
  close(): Promise<void>;
}

/** Connections served at once; a scraper or probe needs one. */
const MAX_CONNECTIONS = 64;
const REQUEST_TIMEOUT_MS = 10_000;

export function parseHttpAddress(address: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(address.trim());
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  if (match === null || host === undefined || !Number.isInteger(port) || port > 65535) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--http must be HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:9464), got ${JSON.stringify(address)}`,
      { argument: "http" },
    );
  }
  return { host, port };
}

export async function serveHttp(options: HttpEndpointsOptions): Promise<HttpEndpoints> {
  const { host, port } = parseHttpAddress(options.address);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    } else if (path === "/readyz") {
      const readiness = options.ready();
      res
        .writeHead(readiness.ready ? 200 : 503, { "content-type": "application/json" })
        .end(`${JSON.stringify(readiness)}\n`);
    } else if (path === "/metrics") {
      const registry = options.metrics();
      if (registry === undefined) {
        res.writeHead(503, { "content-type": "text/plain" }).end("starting\n");
        return;
      }
      registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
        (error: unknown) =>
          res.writeHead(500, { "content-type": "text/plain" }).end(`${String(error)}\n`),
      );
    } else {
      res
        .writeHead(404, { "content-type": "text/plain" })
        .end("not found: /metrics /healthz /readyz\n");
    }
  });
  server.maxConnections = MAX_CONNECTIONS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) =>
      reject(
        new HookbusError(
          "HOOKBUS_HTTP_UNAVAILABLE",
          `cannot serve --http on ${options.address}: ${error.message}`,
          { argument: "http" },
          error,
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  // The endpoints report on a service; they never keep its process alive by themselves.
  server.unref();
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shownHost}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `--http` or HOOKBUS_HTTP; undefined when neither is set (the endpoints are off). */
export function httpAddressFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const value = flag ?? env.HOOKBUS_HTTP;
  return value === undefined || value === "" ? undefined : value;
}
