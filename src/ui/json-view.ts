/**
 * JSON for people, as escaped HTML: indented like JSON.stringify(…, 2), with the values the log's
 * redaction rules masked or hashed marked (the record's `redacted` JSON pointers). Bounded: deep or
 * huge values are cut with a note, so one oversized record cannot make a page enormous.
 */
import type { RedactedPath } from "../log/record.js";
import { escapeHtml, Html } from "./html.js";

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

/**
 * `value` (found at JSON pointer `pointer` of the record) as a `<pre>` block. Built as escaped
 * strings rather than `html` templates: the whitespace is the layout here, and formatters reflow
 * the literal parts of `html` templates.
 */
export function jsonView(value: unknown, pointer = "", redacted = new Map<string, string>()): Html {
  let nodes = 0;
  const span = (cls: string, text: string) => `<span class="${cls}">${escapeHtml(text)}</span>`;
  const walk = (v: unknown, at: string, indent: string, depth: number): string => {
    nodes++;
    const mark = redacted.get(at);
    const inner = render(v, at, indent, depth);
    return mark === undefined
      ? inner
      : `<mark class="redacted" title="redacted (${escapeHtml(mark)})">${inner}${span("tag", `redacted: ${mark}`)}</mark>`;
  };
  const render = (v: unknown, at: string, indent: string, depth: number): string => {
    if (nodes > MAX_NODES || depth > MAX_DEPTH) return span("muted", "… (cut)");
    if (v === null || typeof v === "boolean" || typeof v === "number")
      return span("j-lit", JSON.stringify(v));
    if (typeof v === "string") {
      const text =
        v.length > MAX_STRING_CHARS ? `${v.slice(0, MAX_STRING_CHARS)}… (${v.length} chars)` : v;
      return span("j-str", JSON.stringify(text));
    }
    const next = `${indent}  `;
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      const items = v.map((item, i) => `${next}${walk(item, `${at}/${i}`, next, depth + 1)}`);
      return `[\n${items.join(",\n")}\n${indent}]`;
    }
    if (typeof v === "object") {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) return "{}";
      const items = entries.map(
        ([k, item]) =>
          `${next}${span("j-key", JSON.stringify(k))}: ${walk(item, `${at}/${escapePointerToken(k)}`, next, depth + 1)}`,
      );
      return `{\n${items.join(",\n")}\n${indent}}`;
    }
    return span("muted", typeof v);
  };
  return new Html(`<pre class="json">${walk(value, pointer, "", 0)}</pre>`);
}
