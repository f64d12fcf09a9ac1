/**
 * Charts as plain SVG, drawn on the server: no chart library, no script, and colours come from
 * the stylesheet (classes), so the strict Content-Security-Policy needs no inline styles. Every
 * label goes through `html`, so a policy name cannot inject markup into the SVG either.
 */
import type { MinuteCountRow, PolicyCountRow } from "../audit/pg/query.js";
import { html, type Html } from "./html.js";

/** Outcomes in stacking order (bottom first), each with a class in ui.css. */
export const CHART_OUTCOMES = [
  "allow",
  "modify",
  "reply",
  "block",
  "error",
  "late",
  "observed",
] as const;

const round = (n: number) => Math.round(n * 10) / 10;

/** Decisions (and other records) per minute, stacked by outcome, over [since, until]. */
export function perMinuteChart(rows: readonly MinuteCountRow[], since: Date, until: Date): Html {
  const first = Math.floor(since.getTime() / 60_000);
  const last = Math.floor(until.getTime() / 60_000);
  const minutes = Math.max(1, last - first + 1);
  const buckets = new Map<number, Map<string, number>>();
  for (const row of rows) {
    const m = Math.floor(row.minute.getTime() / 60_000);
    const bucket = buckets.get(m) ?? new Map<string, number>();
    bucket.set(row.outcome, (bucket.get(row.outcome) ?? 0) + row.count);
    buckets.set(m, bucket);
  }
  let max = 1;
  for (const b of buckets.values())
    max = Math.max(
      max,
      [...b.values()].reduce((s, n) => s + n, 0),
    );
  const width = 720;
  const height = 160;
  const left = 40;
  const plot = width - left - 8;
  const barWidth = plot / minutes;
  const bars: Html[] = [];
  for (const [m, bucket] of [...buckets].sort((a, b) => a[0] - b[0])) {
    const x = left + (m - first) * barWidth;
    let y = height - 20;
    for (const outcome of CHART_OUTCOMES) {
      const count = bucket.get(outcome);
      if (count === undefined) continue;
      const h = ((height - 30) * count) / max;
      y -= h;
      const when = new Date(m * 60_000).toISOString().slice(0, 16).replace("T", " ");
      bars.push(
        html`<rect
          class="o-${outcome}"
          x="${round(x)}"
          y="${round(y)}"
          width="${round(Math.max(1, barWidth - 1))}"
          height="${round(h)}"
          ><title>${when} ${outcome}: ${count}</title></rect
        >`,
      );
    }
  }
  const label = (d: Date) => d.toISOString().slice(0, 16).replace("T", " ");
  const legend = CHART_OUTCOMES.map(
    (o, i) =>
      html`<rect class="o-${o}" x="${left + i * 80}" y="0" width="10" height="10"></rect
        ><text x="${left + i * 80 + 14}" y="9">${o}</text>`,
  );
  return html`<svg
    class="chart"
    role="img"
    aria-label="records per minute by outcome"
    viewBox="0 0 ${width} ${height}"
    width="${width}"
    height="${height}"
  >
    <text x="0" y="${height - 20}">0</text>
    <text x="0" y="20">${max}</text>
    ${legend}${bars}
    <line
      class="axis"
      x1="${left}"
      y1="${height - 20}"
      x2="${width - 8}"
      y2="${height - 20}"
    ></line>
    <text x="${left}" y="${height - 4}">${label(since)}</text>
    <text x="${width - 8}" y="${height - 4}" text-anchor="end">${label(until)}</text>
  </svg>`;
}

/** Latency per policy (its answered verdicts): p50 and p99 as two bars on a shared scale. */
export function latencyChart(rows: readonly PolicyCountRow[]): Html {
  const ok = rows.filter((r) => r.status === "ok" && r.p99Ms !== null);
  if (ok.length === 0) return html`<p class="muted">No answered verdicts in this range.</p>`;
  const max = Math.max(1, ...ok.map((r) => r.p99Ms ?? 0));
  const left = 180;
  const plot = 720 - left - 90;
  const rowHeight = 26;
  const height = ok.length * rowHeight + 20;
  const items = ok.map((r, i) => {
    const y = 18 + i * rowHeight;
    const p50 = r.p50Ms ?? 0;
    const p99 = r.p99Ms ?? 0;
    return html`<text x="0" y="${y + 9}">${r.policy.slice(0, 28)}</text>
      <rect
        class="p99"
        x="${left}"
        y="${y}"
        width="${round(Math.max(1, (plot * p99) / max))}"
        height="10"
        ><title>${r.policy} p99 ${round(p99)} ms</title></rect
      >
      <rect
        class="p50"
        x="${left}"
        y="${y + 11}"
        width="${round(Math.max(1, (plot * p50) / max))}"
        height="10"
        ><title>${r.policy} p50 ${round(p50)} ms</title></rect
      >
      <text x="${720 - 85}" y="${y + 9}">p99 ${round(p99)} ms</text
      ><text x="${720 - 85}" y="${y + 20}">p50 ${round(p50)} ms</text>`;
  });
  return html`<svg
    class="chart"
    role="img"
    aria-label="latency per policy, p50 and p99"
    viewBox="0 0 720 ${height}"
    width="720"
    height="${height}"
  >
    <rect class="p99" x="${left}" y="0" width="10" height="8"></rect>
    <text x="${left + 14}" y="8">p99</text>
    <rect class="p50" x="${left + 60}" y="0" width="10" height="8"></rect>
    <text x="${left + 74}" y="8">p50</text>
    ${items}
  </svg>`;
}

/** One policy's latency in a timeline row, against the session's slowest (`max`). */
export function latencyBar(ms: number, max: number, status: string): Html {
  const width = 120;
  const w = Math.max(1, (width * Math.min(ms, max)) / Math.max(max, 1));
  return html`<svg
    class="bar"
    role="img"
    aria-label="${round(ms)} ms"
    viewBox="0 0 ${width} 10"
    width="${width}"
    height="10"
  >
    <rect class="track" x="0" y="0" width="${width}" height="10"></rect>
    <rect class="s-${status}" x="0" y="0" width="${round(w)}" height="10">
      <title>${round(ms)} ms</title>
    </rect>
  </svg>`;
}
