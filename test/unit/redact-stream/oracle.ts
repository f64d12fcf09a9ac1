/**
 * The whole-text redaction the stream must add up to, written independently of the streaming
 * matcher: the secret detectors' own regular expressions (SECRET_PATTERNS, unbounded, run over
 * the whole text at once) and the edge's email pattern, each found left to right, overlapping
 * findings merged into one placeholder named by the finding that starts first.
 */
import { EDGE_RULES } from "../../../src/redact-stream/index.js";
import { SECRET_PATTERNS } from "../../../src/vocabulary/secrets.js";

interface Finding {
  start: number;
  end: number;
  order: number;
  placeholder: string;
}

const DETECTORS = [
  ...SECRET_PATTERNS.map(({ label, regex, group }) => ({
    regex: new RegExp(regex.source, regex.flags.includes("d") ? regex.flags : `${regex.flags}d`),
    group,
    placeholder: `[secret:${label}]`,
  })),
  {
    regex: new RegExp(EDGE_RULES.find((r) => r.label === "email")!.regex.source, "gd"),
    group: undefined,
    placeholder: "[email]",
  },
];

function findings(text: string): Finding[] {
  const found: Finding[] = [];
  DETECTORS.forEach(({ regex, group, placeholder }, order) => {
    for (const m of text.matchAll(regex)) {
      const span = group === undefined ? [m.index, m.index + m[0].length] : m.indices?.[group];
      if (span === undefined || span[0] === span[1]) continue;
      found.push({ start: span[0]!, end: span[1]!, order, placeholder });
    }
  });
  return found.sort((a, b) => a.start - b.start || a.order - b.order);
}

export function wholeTextRedaction(text: string): { text: string; removed: string[] } {
  let out = "";
  let at = 0;
  const removed: string[] = [];
  const all = findings(text);
  for (let i = 0; i < all.length;) {
    const first = all[i]!;
    let end = first.end;
    let j = i + 1;
    for (; j < all.length && all[j]!.start < end; j++) end = Math.max(end, all[j]!.end);
    out += text.slice(at, first.start) + first.placeholder;
    removed.push(text.slice(first.start, end));
    at = end;
    i = j;
  }
  return { text: out + text.slice(at), removed };
}
