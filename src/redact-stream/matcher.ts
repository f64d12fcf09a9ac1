/**
 * The streaming redactor: deltas in, what is safe to show out. Its output, concatenated, is
 * exactly what `redactText` makes of the whole text, whatever the chunking; nothing a redaction
 * will remove is ever returned first.
 *
 * Each rule scans forward on its own. A position is settled for a rule once `start` cannot
 * match there (its few characters are known) or its whole window is known and matched or not.
 * Everything before the least settled position is final: shown, or replaced by one placeholder
 * per stretch of overlapping findings (named by the finding that starts first, then by the
 * rule listed first). Only text after that position is kept, plus a short look-behind, so
 * memory is bounded by the longest window however long the answer is.
 */
import { HookbusError } from "../foundation/errors.js";
import { checkStreamRule, LOOK_BEHIND, plainFlags, type StreamRule } from "./rules.js";

interface CompiledRule {
  rule: StreamRule;
  /** `start`, searched forward over the known text. */
  start: RegExp;
  /** `regex`, tried at one position (sticky) and only where `start` matches there. */
  whole: RegExp;
}

interface Span {
  start: number;
  end: number;
  rule: number;
  open: boolean;
}

/** A finding whose end is not known yet: a token still going on, or a PEM block before its END. */
interface OpenFinding {
  span: Span;
  matchEnd: number;
  /** The END line looked for, or none for a token (`tail`). */
  terminator?: string;
}

/** A rule set ready to stream: build one per registry revision, then a redactor per answer. */
export interface CompiledStreamRules {
  readonly rules: readonly CompiledRule[];
  /** The most characters a stream ever holds back: the longest window. */
  readonly holdBack: number;
}

export function compileStreamRules(rules: readonly StreamRule[]): CompiledStreamRules {
  const compiled = rules.map((rule) => {
    checkStreamRule(rule);
    const flags = plainFlags(rule.regex);
    return {
      rule,
      start: new RegExp(rule.start.source, `${flags}g`),
      whole: new RegExp(
        `(?=${rule.start.source})(?:${rule.regex.source})`,
        `${flags}y${rule.group === undefined ? "" : "d"}`,
      ),
    };
  });
  return { rules: compiled, holdBack: Math.max(0, ...rules.map((r) => r.maxLength)) };
}

export class StreamRedactor {
  private readonly rules: readonly CompiledRule[];
  readonly holdBack: number;
  /** The text kept, from absolute offset `base` to the end of what was pushed. */
  private text = "";
  private base = 0;
  private ended = false;
  private readonly scans: number[];
  private readonly opens: (OpenFinding | undefined)[];
  private spans: Span[] = [];
  private emitted = 0;
  private regionEnd = 0;

  constructor(compiled: CompiledStreamRules) {
    this.rules = compiled.rules;
    this.holdBack = compiled.holdBack;
    this.scans = this.rules.map(() => 0);
    this.opens = this.rules.map(() => undefined);
  }

  /** Characters received but not shown yet (never more than `holdBack`). */
  get held(): number {
    return this.end_() - this.emitted;
  }

  /** Takes the next delta; returns the text that can be shown now (maybe empty). */
  push(delta: string): string {
    if (this.ended) {
      throw new HookbusError("HOOKBUS_INVALID_ARGUMENT", "push() after end() on a StreamRedactor");
    }
    this.text += delta;
    return this.step();
  }

  /** The stream ended: returns the rest, redacted. */
  end(): string {
    if (this.ended) return "";
    this.ended = true;
    return this.step();
  }

  private end_(): number {
    return this.base + this.text.length;
  }

  private step(): string {
    for (let r = 0; r < this.rules.length; r++) this.advance(r);
    const settled = this.ended ? this.end_() : Math.min(...this.scans, this.end_());
    const out = this.emit(settled);
    this.forget();
    return out;
  }

  /** Moves rule r's scan as far as the known text settles it. */
  private advance(r: number): void {
    for (;;) {
      const open = this.opens[r];
      if (open !== undefined) {
        if (!this.extend(r, open)) return;
        continue;
      }
      const at = this.nextStart(r);
      if (at === undefined) return;
      this.tryAt(r, at);
    }
  }

  /** The next position where rule r's `start` matches, once its window is known there. */
  private nextStart(r: number): number | undefined {
    const { rule, start } = this.rules[r]!;
    const n = this.end_();
    const from = this.scans[r]!;
    if (from >= n) return undefined;
    start.lastIndex = from - this.base;
    const match = start.exec(this.text);
    const found = match === null ? Infinity : this.base + match.index;
    // Positions whose start window is wholly known; before `found` none of them can start.
    const known = this.ended ? n : n - rule.startLength + 1;
    if (found >= known) {
      this.scans[r] = Math.max(from, Math.min(found, known));
      return undefined;
    }
    this.scans[r] = found;
    if (!this.ended && found + rule.maxLength > n) return undefined;
    return found;
  }

  /** Tries rule r's whole pattern in its window at `at` (start matched there). */
  private tryAt(r: number, at: number): void {
    const { rule, whole } = this.rules[r]!;
    const windowEnd = Math.min(at + rule.maxLength, this.end_());
    const from = Math.max(this.base, at - LOOK_BEHIND);
    const window = this.text.slice(from - this.base, windowEnd - this.base);
    whole.lastIndex = at - from;
    const match = whole.exec(window);
    if (match === null) {
      this.scans[r] = at + 1;
      return;
    }
    const matchEnd = at + match[0].length;
    const range: readonly [number, number] | undefined =
      rule.group === undefined ? [at - from, matchEnd - from] : match.indices?.[rule.group];
    this.scans[r] = Math.max(matchEnd, at + 1);
    if (range === undefined || range[0] === range[1]) return;
    const span: Span = { start: from + range[0], end: from + range[1], rule: r, open: false };
    this.spans.push(span);
    if (rule.until !== undefined) {
      this.open(r, { span, matchEnd, terminator: rule.until(match) });
    } else if (rule.tail !== undefined && matchEnd === windowEnd && span.end === matchEnd) {
      this.open(r, { span, matchEnd });
    }
  }

  private open(r: number, finding: OpenFinding): void {
    finding.span.open = true;
    this.opens[r] = finding;
    this.scans[r] = finding.span.end;
  }

  /** Grows an open finding over the known text; true once it ended. */
  private extend(r: number, finding: OpenFinding): boolean {
    const { span, terminator } = finding;
    const n = this.end_();
    let end: number | undefined;
    if (terminator === undefined) {
      const tail = this.rules[r]!.rule.tail!;
      let e = span.end;
      while (e < n && tail.test(this.text[e - this.base]!)) e++;
      span.end = e;
      this.scans[r] = e;
      if (e < n || this.ended) end = e;
    } else {
      // The END line may straddle what was searched before: look again over its length.
      const from = Math.max(finding.matchEnd, span.end - terminator.length + 1);
      const index = this.text.indexOf(terminator, from - this.base);
      if (index !== -1) end = this.base + index + terminator.length;
      else if (this.ended) end = n;
      span.end = end ?? n;
      this.scans[r] = end ?? Math.max(finding.matchEnd, n - terminator.length + 1);
    }
    if (end === undefined) return false;
    span.open = false;
    this.opens[r] = undefined;
    return true;
  }

  /** Shows what is final up to `settled`: text, and one placeholder per stretch of findings. */
  private emit(settled: number): string {
    let out = "";
    for (;;) {
      this.regionEnd = this.growRegion(this.regionEnd);
      if (this.emitted < this.regionEnd) {
        this.emitted = Math.min(settled, this.regionEnd);
        if (this.emitted < this.regionEnd) return out;
      }
      const next = this.firstSpanFrom(this.emitted);
      const stop = Math.min(settled, next?.start ?? Infinity);
      if (stop > this.emitted) {
        out += this.text.slice(this.emitted - this.base, stop - this.base);
        this.emitted = stop;
      }
      if (next === undefined || next.start >= settled) return out;
      out += this.rules[next.rule]!.rule.placeholder;
      this.regionEnd = next.end;
    }
  }

  /** The end of the stretch of overlapping findings that reaches `end`. */
  private growRegion(end: number): number {
    let grown = end;
    for (let changed = true; changed;) {
      changed = false;
      for (const span of this.spans) {
        if (span.start < grown && span.end > grown) {
          grown = span.end;
          changed = true;
        }
      }
    }
    return grown;
  }

  /** The finding starting first at or after `at` (the rule listed first on a tie). */
  private firstSpanFrom(at: number): Span | undefined {
    let first: Span | undefined;
    for (const span of this.spans) {
      if (span.start < at) continue;
      if (first === undefined || span.start < first.start) first = span;
      else if (span.start === first.start && span.rule < first.rule) first = span;
    }
    return first;
  }

  /** Drops the text and findings nothing will read again. */
  private forget(): void {
    this.spans = this.spans.filter((span) => span.open || span.end > this.emitted);
    const keep = Math.max(this.base, Math.min(this.emitted, ...this.scans) - LOOK_BEHIND);
    if (keep > this.base) {
      this.text = this.text.slice(keep - this.base);
      this.base = keep;
    }
  }
}

/** Redacts a whole text with the same rules and windows (what a stream's output adds up to). */
export function redactText(compiled: CompiledStreamRules, text: string): string {
  const redactor = new StreamRedactor(compiled);
  return redactor.push(text) + redactor.end();
}
