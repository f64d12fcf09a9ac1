/** The frame of every page: title, navigation, the stylesheet, and a page's own script if any. */
import { html, type Html, type HtmlValue } from "./html.js";

export type Script = "tail" | "replay";

export function page(title: string, body: HtmlValue, script?: Script): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${title} · hookbus audit</title>
        <link rel="stylesheet" href="/static/ui.css" />
        ${script === undefined ? "" : html`<script type="module" src="/static/${script}.js"></script>`}
      </head>
      <body>
        <header>
          <a class="brand" href="/">hookbus audit</a>
          <nav>
            <a href="/">Search</a><a href="/tail">Live tail</a><a href="/replay">Replay report</a
            ><a href="/approvals">Approvals</a><a href="/stops">Emergency stops</a
            ><a href="/registry">Registry</a>
          </nav>
          <span class="muted">read-only</span>
        </header>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html> `;
}

/** The columns of a row of log records (search results and the live tail). */
export const RECORD_COLUMNS = [
  "seq",
  "time",
  "agent",
  "session · run",
  "hook",
  "tool",
  "action",
  "outcome",
  "decided by / reason",
  "latency",
] as const;

export function headerRow(headers: readonly string[]): Html {
  return html`<thead>
    <tr>
      ${headers.map((h) => html`<th>${h}</th>`)}
    </tr>
  </thead>`;
}

/** A table of rows under its header, or the sentence that says there are none. */
export function tableOrEmpty(
  className: string,
  headers: readonly string[],
  rows: readonly Html[],
  empty: string,
): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<table class="${className}">
    ${headerRow(headers)}
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

/** An outcome (or record kind) as a coloured badge. */
export function badge(outcome: string): Html {
  return html`<span class="badge o-${/^[a-z]+$/.test(outcome) ? outcome : "unknown"}"
    >${outcome}</span
  >`;
}

export function errorPage(status: number, code: string, message: string): Html {
  return page(
    status === 404 ? "Not found" : "Cannot show this page",
    html`<p class="error"><code>${code}</code> ${message}</p>
      <p><a href="/">Back to search</a> · the codes are explained in docs/errors.md</p>`,
  );
}
