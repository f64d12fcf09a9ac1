/**
 * The UI's pages, one route each. A route renders a page from the index (or the log), or answers
 * itself (the live tail streams); `undefined` is "not found" with the route's own reason.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Bus } from "../bus/bus.js";
import type { AuditSource } from "../audit/audit-source.js";
import { approvalsPage } from "./approvals-page.js";
import { registryPage } from "./registry-page.js";
import { decisionPage } from "./decision-page.js";
import type { Html } from "./html.js";
import { searchPage } from "./search-page.js";
import { sessionPage } from "./session-page.js";
import { stopsPage } from "./stops-page.js";
import { replayPage, tailPage } from "./static-pages.js";
import { SECURITY_HEADERS, send, sendError, sendPage } from "./responses.js";
import type { LiveTails } from "./tail-stream.js";

export interface RouteContext {
  /** Every page's reads (the index). */
  source: AuditSource;
  /** The NATS server the answer commands name (`--server`), when known. */
  natsUrl?: string | undefined;
  bus: Bus;
  tails: LiveTails;
  assets: Map<string, Buffer>;
}

export interface Request {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  head: boolean;
}

type PageRoute = (ctx: RouteContext, url: URL) => Promise<Html | undefined> | Html;

const PAGES: Readonly<Record<string, PageRoute>> = {
  "/": (ctx, url) => searchPage(ctx.source, url),
  "/session": (ctx, url) => sessionPage(ctx.source, url),
  "/decision": (ctx, url) => decisionPage(ctx.source, ctx.bus, url),
  "/approvals": (ctx, url) =>
    approvalsPage(ctx.source, { namespace: ctx.source.namespace, natsUrl: ctx.natsUrl }, url),
  "/stops": (ctx, url) => stopsPage(ctx.bus, url),
  "/registry": (ctx, url) => registryPage(ctx.bus, url),
  "/tail": (_ctx, url) => tailPage(url),
  "/replay": (_ctx, url) => replayPage(url),
};

/** Why a page found nothing, by route (the default: no such page). */
const NOT_FOUND: Readonly<Record<string, string>> = {
  "/decision": "the index has no record with this sequence (yet): is the indexer running?",
};

export const STATIC_TYPES: Readonly<Record<string, string>> = {
  "ui.css": "text/css; charset=utf-8",
  "tail.js": "text/javascript; charset=utf-8",
  "replay.js": "text/javascript; charset=utf-8",
};

/** The assets shipped next to this module (src/ui/static, dist/ui/static), read once. */
export function loadStatic(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of Object.keys(STATIC_TYPES))
    files.set(name, readFileSync(new URL(`./static/${name}`, import.meta.url)));
  return files;
}

function serveStatic(ctx: RouteContext, { res, url, head }: Request): void {
  const name = url.pathname.slice("/static/".length);
  const body = ctx.assets.get(name);
  const type = STATIC_TYPES[name];
  if (body === undefined || type === undefined)
    return sendError(res, 404, "HOOKBUS_INVALID_ARGUMENT", "no such file", head);
  send(res, 200, type, body, head);
}

export async function route(ctx: RouteContext, request: Request): Promise<void> {
  const { req, res, url, head } = request;
  if (url.pathname.startsWith("/static/")) return serveStatic(ctx, request);
  if (url.pathname === "/api/tail") {
    // A stream has no HEAD: it would hold a tail open for a response without a body.
    if (head) return sendError(res, 405, "HOOKBUS_INVALID_ARGUMENT", "the tail is GET only", true);
    return ctx.tails.serve(url, req, res, SECURITY_HEADERS);
  }
  const page = PAGES[url.pathname];
  const html = page === undefined ? undefined : await page(ctx, url);
  if (html === undefined) {
    const why = (page && NOT_FOUND[url.pathname]) ?? "no such page";
    return sendError(res, 404, "HOOKBUS_INVALID_ARGUMENT", why, head);
  }
  sendPage(res, 200, html, head);
}
