/**
 * The audit web UI's server: node:http, read-only (GET and HEAD only), bound to 127.0.0.1 unless
 * told otherwise. Pages are rendered here from the index (escaped by construction, see html.ts);
 * the live tail streams the log over NATS as server-sent events. Every response carries a strict
 * Content-Security-Policy (scripts and styles only from this server, nothing inline), and errors
 * reach the browser as their code and message, never a stack trace.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import type { HookbusError } from "../foundation/errors.js";
import { isHookbusError } from "../foundation/errors.js";
import type { PgPool } from "../indexer/pg.js";
import { approvalsPage } from "./approvals-page.js";
import { decisionPage } from "./decision-page.js";
import { errorPage } from "./layout.js";
import type { Html } from "./html.js";
import { searchPage } from "./search-page.js";
import { sessionPage } from "./session-page.js";
import { replayPage, tailPage } from "./static-pages.js";
import { LiveTails } from "./tail-stream.js";

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "Content-Security-Policy": CONTENT_SECURITY_POLICY,
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cache-Control": "no-store",
};

/** Longer request targets are refused (414): every page's parameters fit well within it. */
export const MAX_URL_CHARS = 4096;

const STATIC_TYPES: Record<string, string> = {
  "ui.css": "text/css; charset=utf-8",
  "tail.js": "text/javascript; charset=utf-8",
  "replay.js": "text/javascript; charset=utf-8",
};

/** The assets shipped next to this module (src/ui/static, dist/ui/static), read once. */
function loadStatic(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of Object.keys(STATIC_TYPES))
    files.set(name, readFileSync(new URL(`./static/${name}`, import.meta.url)));
  return files;
}

export interface UiServerOptions {
  pool: PgPool;
  namespace: string;
  /** The log, for the live tail (connected with the auditor's credentials). */
  bus: Bus;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  logger?: Logger;
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

function statusOf(error: HookbusError): number {
  switch (error.code) {
    case "HOOKBUS_INVALID_ARGUMENT":
      return 400;
    case "HOOKBUS_LIMIT_EXCEEDED":
      return 429;
    case "HOOKBUS_INDEX_UNAVAILABLE":
    case "HOOKBUS_INDEX_SCHEMA":
    case "HOOKBUS_LOG_UNAVAILABLE":
      return 503;
    default:
      return 500;
  }
}

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const host = options.host ?? "127.0.0.1";
  const { pool, namespace, logger } = options;
  const assets = loadStatic();
  const tails = new LiveTails(options.bus, options.maxTails ?? 16);

  const send = (
    res: ServerResponse,
    status: number,
    type: string,
    body: string | Buffer,
    head: boolean,
  ) => {
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      "Content-Type": type,
      "Content-Length": Buffer.byteLength(body),
    });
    res.end(head ? undefined : body);
  };
  const sendPage = (res: ServerResponse, status: number, page: Html, head: boolean) =>
    send(res, status, "text/html; charset=utf-8", page.text, head);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const head = req.method === "HEAD";
    if (req.method !== "GET" && !head) {
      res.setHeader("Allow", "GET, HEAD");
      return sendPage(
        res,
        405,
        errorPage(405, "HOOKBUS_INVALID_ARGUMENT", "this UI is read-only: only GET and HEAD"),
        false,
      );
    }
    if (!hostAllowed(req, host))
      return sendPage(
        res,
        421,
        errorPage(
          421,
          "HOOKBUS_INVALID_ARGUMENT",
          "open the UI by its loopback address (127.0.0.1 or localhost)",
        ),
        head,
      );
    if ((req.url ?? "").length > MAX_URL_CHARS)
      return sendPage(
        res,
        414,
        errorPage(
          414,
          "HOOKBUS_INVALID_ARGUMENT",
          `the address is longer than ${MAX_URL_CHARS} characters`,
        ),
        head,
      );
    const url = new URL(req.url ?? "/", "http://ui.invalid");
    try {
      if (url.pathname.startsWith("/static/")) {
        const name = url.pathname.slice("/static/".length);
        const body = assets.get(name);
        const type = STATIC_TYPES[name];
        if (body === undefined || type === undefined)
          return sendPage(
            res,
            404,
            errorPage(404, "HOOKBUS_INVALID_ARGUMENT", "no such file"),
            head,
          );
        return send(res, 200, type, body, head);
      }
      switch (url.pathname) {
        case "/":
          return sendPage(res, 200, await searchPage(pool, namespace, url), head);
        case "/session":
          return sendPage(res, 200, await sessionPage(pool, namespace, url), head);
        case "/decision": {
          const page = await decisionPage(pool, options.bus, url);
          if (page === undefined)
            return sendPage(
              res,
              404,
              errorPage(
                404,
                "HOOKBUS_INVALID_ARGUMENT",
                "the index has no record with this sequence (yet): is the indexer running?",
              ),
              head,
            );
          return sendPage(res, 200, page, head);
        }
        case "/approvals":
          return sendPage(res, 200, await approvalsPage(pool, namespace, url), head);
        case "/tail":
          return sendPage(res, 200, tailPage(url), head);
        case "/replay":
          return sendPage(res, 200, replayPage(url), head);
        case "/api/tail":
          // A stream has no HEAD: it would hold a tail open for a response without a body.
          if (head)
            return sendPage(
              res,
              405,
              errorPage(405, "HOOKBUS_INVALID_ARGUMENT", "the tail is GET only"),
              true,
            );
          return await tails.serve(url, req, res, SECURITY_HEADERS);
        default:
          return sendPage(
            res,
            404,
            errorPage(404, "HOOKBUS_INVALID_ARGUMENT", "no such page"),
            head,
          );
      }
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (isHookbusError(error))
        return sendPage(
          res,
          statusOf(error),
          errorPage(statusOf(error), error.code, error.message),
          head,
        );
      // Unknown failures: logged here in full, only a code reaches the browser.
      logger?.error({ err: error, path: url.pathname }, "ui request failed");
      return sendPage(
        res,
        500,
        errorPage(500, "HOOKBUS_INTERNAL", "the page failed; the server's log has the details"),
        head,
      );
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger?.error({ err: error }, "ui response failed");
      res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    openTails: () => tails.size,
    async close() {
      tails.closeAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
