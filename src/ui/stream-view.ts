/**
 * A streamed answer on the record page (issue 34, item 4): the model's text, what the user was
 * shown, and where a window's block cut the stream. The texts are read from the event as stored,
 * so a value redaction masked or the privacy seal holds shows as such, never as the original.
 */
import type { DecisionRecord } from "../log/record.js";
import { html, type Html } from "./html.js";

export function streamSection(record: DecisionRecord): Html | "" {
  const summary = record.stream;
  if (summary === undefined) return "";
  const stream = record.event.stream as { shown?: unknown } | undefined;
  const produced = record.event.content;
  if (summary.window !== undefined) {
    return html`<section class="stream">
      <h2>Streamed answer <span class="tag">window ${summary.window}</span></h2>
      <p>characters read ${summary.producedChars}; this window is the event's content</p>
    </section>`;
  }
  const cut = summary.cutAt;
  return html`<section class="stream">
    <h2>
      Streamed answer
      ${cut === undefined ? html`<span class="tag">not cut</span>` : html`<span class="tag warn">cut at ${cut}</span>`}
    </h2>
    <h3>
      What the model produced <span class="muted">(${summary.producedChars} characters)</span>
    </h3>
    ${typeof produced === "string" ? producedText(produced, cut) : html`<p class="muted">${String(produced)}</p>`}
    <h3>
      What the user was shown <span class="muted">(${summary.shownChars ?? 0} characters)</span>
    </h3>
    <pre class="shown">${typeof stream?.shown === "string" ? stream.shown : "(not recorded)"}</pre>
  </section>`;
}

/** The model's text, with the part after the cut marked as never shown. */
function producedText(text: string, cut: number | undefined): Html {
  if (cut === undefined || cut >= text.length) return html`<pre class="produced">${text}</pre>`;
  return html`<pre
    class="produced"
  >${text.slice(0, cut)}<mark title="never shown: cut here">✂${text.slice(cut)}</mark></pre>`;
}
