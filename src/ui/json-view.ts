/**
 * JSON for people, as escaped HTML: indented like JSON.stringify(…, 2), with the values the log's
 * redaction rules masked or hashed marked (the record's `redacted` JSON pointers). Bounded: deep or
 * huge values are cut with a note, so one oversized record cannot make a page enormous.
 */
import type { RedactedPath } from "../log/record.js";
import { html, type Html } from "./html.js";

const MAX_DEPTH = 24;
const MAX_NODES = 5000;
const MAX_STRING_CHARS = 4000;

function escapePointerToken(token: string): string {
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

export function redactedPointers(record: {
  redacted?: RedactedPath[] | undefined;
}): Map<string, string> {
  const marks = new Map<string, string>();
  if (Array.isArray(record.redacted))
    for (const r of record.redacted)
      if (typeof r?.path === "string") marks.set(r.path, String(r.action));
  return marks;
}

/** `value` (found at JSON pointer `pointer` of the record) as a `<pre>` block. */
export function jsonView(value: unknown, pointer = "", redacted = new Map<string, string>()): Html {
  let nodes = 0;
  const walk = (v: unknown, at: string, indent: string, depth: number): Html => {
    nodes++;
    const mark = redacted.get(at);
    const inner = render(v, at, indent, depth);
    return mark === undefined
      ? inner
      : html`<mark class="redacted" title="redacted (${mark})"
          >${inner}<span class="tag">redacted: ${mark}</span></mark
        >`;
  };
  const render = (v: unknown, at: string, indent: string, depth: number): Html => {
    if (nodes > MAX_NODES || depth > MAX_DEPTH) return html`<span class="muted">… (cut)</span>`;
    if (v === null || typeof v === "boolean" || typeof v === "number")
      return html`<span class="j-lit">${JSON.stringify(v)}</span>`;
    if (typeof v === "string") {
      const text =
        v.length > MAX_STRING_CHARS ? `${v.slice(0, MAX_STRING_CHARS)}… (${v.length} chars)` : v;
      return html`<span class="j-str">${JSON.stringify(text)}</span>`;
    }
    const next = `${indent}  `;
    if (Array.isArray(v)) {
      if (v.length === 0) return html`[]`;
      const items = v.map(
        (item, i) =>
          html`${next}${walk(item, `${at}/${i}`, next, depth + 1)}${i < v.length - 1 ? "," : ""} `,
      );
      return html`[ ${items}${indent}]`;
    }
    if (typeof v === "object") {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) return html`{}`;
      const items = entries.map(
        ([k, item], i) =>
          html`${next}<span class="j-key">${JSON.stringify(k)}</span>:
            ${walk(item, `${at}/${escapePointerToken(k)}`, next, depth + 1)}${i < entries.length - 1 ? "," : ""} `,
      );
      return html`{ ${items}${indent}}`;
    }
    return html`<span class="muted">${typeof v}</span>`;
  };
  return html`<pre class="json">${walk(value, pointer, "", 0)}</pre>`;
}
