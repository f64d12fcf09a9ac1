/**
 * HTML built so that record content cannot become markup: every value interpolated into the
 * `html` template is escaped unless it is itself an `Html` (built by this module). Record content
 * is attacker-influenced (a tool parameter, a model's reply), so there is no "raw string" escape
 * hatch: a page is `Html` all the way down.
 */
const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Escapes text for element content and (double- or single-quoted) attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join("");
  return escapeHtml(String(value));
}

/** `html\`<td>${text}</td>\``: the literal parts are trusted markup, every value is escaped. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** A URL path with query parameters, each encoded (for href attributes, still escaped by `html`). */
export function href(path: string, params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== "") query.set(k, String(v));
  const text = query.toString();
  return text === "" ? path : `${path}?${text}`;
}
