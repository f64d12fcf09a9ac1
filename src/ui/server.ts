/**
 * The audit web UI's server: node:http, read-only (GET and HEAD only), bound to 127.0.0.1 unless
 * told otherwise. Pages are rendered from the index (escaped by construction, see html.ts; routes
 * in routes.ts); the live tail streams the log over NATS as server-sent events. Every response
 * carries the security headers of responses.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { HookbusError, isHookbusError } from "../foundation/errors.js";
import type { AuditSource } from "../audit/audit-source.js";
import { sendError, statusOf } from "./responses.js";
import { loadStatic, route, type RouteContext } from "./routes.js";
import { LiveTails } from "./tail-stream.js";

export { CONTENT_SECURITY_POLICY } from "./responses.js";

/** Longer request targets are refused (414): every page's parameters fit well within it. */
export const MAX_URL_CHARS = 4096;

export interface UiServerOptions {
  /** Where the pages read the audit log: the index (openAuditSource with an index URL). */
  source: AuditSource;
  /** The log, for the live tail (connected with the auditor's credentials). */
  bus: Bus;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  logger?: Logger;
  /** The NATS server pasted answer commands name (`--server`); the UI's own when not given. */
  natsUrl?: string;
  /** Live tails open at once (default 16); more are refused with HOOKBUS_LIMIT_EXCEEDED. */
  maxTails?: number;
}

export interface UiServer {
  /** `http://host:port` */
  url: string;
  /** Live tails open now. */
  openTails(): number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/**
 * A loopback server answers only requests addressed to a loopback name: a web page elsewhere
 * cannot reach it through DNS rebinding (its Host header would be the attacker's name).
 */
function hostAllowed(req: IncomingMessage, bound: string): boolean {
  if (!LOOPBACK.has(bound)) return true;
  const host = req.headers.host;
  if (host === undefined) return false;
  const name = host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.split(":")[0];
  return name !== undefined && LOOPBACK.has(name);
}

/** Read-only, addressed by a loopback name, a bounded target: else the error page, and false. */
function acceptable(req: IncomingMessage, res: ServerResponse, host: string): boolean {
  const head = req.method === "HEAD";
  if (req.method !== "GET" && !head) {
    res.setHeader("Allow", "GET, HEAD");
    sendError(
      res,
      405,
      "HOOKBUS_INVALID_ARGUMENT",
      "this UI is read-only: only GET and HEAD",
      false,
    );
    return false;
  }
  if (!hostAllowed(req, host)) {
    const fix = "open the UI by its loopback address (127.0.0.1 or localhost)";
    sendError(res, 421, "HOOKBUS_INVALID_ARGUMENT", fix, head);
    return false;
  }
  if ((req.url ?? "").length > MAX_URL_CHARS) {
    const why = `the address is longer than ${MAX_URL_CHARS} characters`;
    sendError(res, 414, "HOOKBUS_INVALID_ARGUMENT", why, head);
    return false;
  }
  return true;
}

async function handle(
  ctx: RouteContext,
  host: string,
  logger: Logger | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (!acceptable(req, res, host)) return;
  const head = req.method === "HEAD";
  const url = new URL(req.url ?? "/", "http://ui.invalid");
  try {
    await route(ctx, { req, res, url, head });
  } catch (error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (isHookbusError(error))
      return sendError(res, statusOf(error), error.code, error.message, head);
    // Unknown failures: logged here in full, only a code reaches the browser.
    logger?.error({ err: error, path: url.pathname }, "ui request failed");
    const message = "the page failed; the server's log has the details";
    sendError(res, 500, "HOOKBUS_INTERNAL", message, head);
  }
}

async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${shown}:${address.port}`;
}

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  // Its pages page, count and list approvals: only the index answers those without a full scan.
  if (options.source.kind !== "index")
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      "the UI reads the index: open its AuditSource with an index URL",
      {
        argument: "source",
      },
    );
  const host = options.host ?? "127.0.0.1";
  const { logger } = options;
  const tails = new LiveTails(options.bus, options.maxTails ?? 16);
  const ctx: RouteContext = {
    source: options.source,
    natsUrl: options.natsUrl,
    bus: options.bus,
    tails,
    assets: loadStatic(),
  };
  const server: Server = createServer((req, res) => {
    handle(ctx, host, logger, req, res).catch((error: unknown) => {
      logger?.error({ err: error }, "ui response failed");
      res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const url = await listen(server, options.port ?? 0, host);
  return {
    url,
    openTails: () => tails.size,
    async close() {
      tails.closeAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
