/**
 * How the UI answers: every response with a strict Content-Security-Policy (scripts and styles
 * only from this server, nothing inline) and the other security headers; errors as their code and
 * message, never a stack trace.
 */
import type { ServerResponse } from "node:http";
import type { HookbusError } from "../foundation/errors.js";
import type { Html } from "./html.js";
import { errorPage } from "./layout.js";

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

export const SECURITY_HEADERS = {
  "Content-Security-Policy": CONTENT_SECURITY_POLICY,
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cache-Control": "no-store",
};

/** One response; a HEAD request gets the headers only. */
export function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  head: boolean,
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": type,
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(head ? undefined : body);
}

export function sendPage(res: ServerResponse, status: number, page: Html, head: boolean): void {
  send(res, status, "text/html; charset=utf-8", page.text, head);
}

/** An error page: the code and a sentence that says what to do. */
export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  head: boolean,
): void {
  sendPage(res, status, errorPage(status, code, message), head);
}

/** The HTTP status a coded error is shown with. */
export function statusOf(error: HookbusError): number {
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
