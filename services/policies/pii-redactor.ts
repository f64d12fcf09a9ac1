/**
 * PII and secrets redactor for tool results (before_tool_result) and the final answer
 * (before_response_emit).
 *
 * Detection is "extract candidates, then validate":
 * - emails: candidates around each `@`, validated by `validator`'s `isEmail`;
 * - card numbers: runs of 13-19 digits (optionally grouped by single spaces or dashes), validated
 *   by `validator`'s `isCreditCard` (issuer prefix and length, and the Luhn checksum);
 * - phone numbers: phone-like character runs, validated by `libphonenumber-js` (full metadata)
 *   for the configured default countries; numbers written internationally (`+44 …`) are found
 *   whatever the countries;
 * - secrets: fixed token formats (AWS access key ids, GitHub, Slack, OpenAI/Anthropic, Stripe,
 *   Google API keys, JWTs, bearer tokens, passwords in URLs, `password=` style assignments)
 *   and PEM private keys. These formats have no validating library: they are patterns.
 *
 * Emails and phone numbers inside the scheme, host and path of a URL are left alone (package
 * names like `pkg@1.2.3`, profile paths); the query string and fragment are scanned.
 */
import { findPhoneNumbersInText, type CountryCode } from "libphonenumber-js/max";
import validator from "validator";
import { definePolicy, type Policy } from "../../src/index.js";
import { SECRET_PATTERNS } from "../../src/vocabulary/secrets.js";
import {
  checkPolicyName,
  configError,
  isTextPart,
  mapStringLeaves,
  resultShape,
  toRegExp,
} from "./shared.js";

export type RedactionKind = "email" | "phone" | "card" | "secret";

export const REDACTION_KINDS: readonly RedactionKind[] = ["secret", "card", "email", "phone"];

export interface ExtraPattern {
  /** Placeholder label: the match becomes `[<label>]`. Lowercase letters, digits, `-`, `:`. */
  label: string;
  pattern: RegExp | string;
}

export interface RedactOptions {
  /** What to look for; default all four. */
  kinds?: readonly RedactionKind[];
  /**
   * Countries whose national formats are recognised (`(212) 736-5000` is a US number).
   * Default `["US"]`. International numbers (`+44 20 7183 8750`) are found whatever this says.
   */
  phoneCountries?: readonly CountryCode[];
  /** More patterns, redacted like secrets (after the built-in ones). */
  extraPatterns?: readonly ExtraPattern[];
}

export interface PiiRedactorOptions extends RedactOptions {
  /** Registry name; default `pii-redactor`. */
  name?: string;
  /**
   * A tool result that is neither text nor content parts (an object, an array of values):
   * `"json"` (default) redacts its string leaves and, when something was found, replaces the
   * result with that JSON text; `"ignore"` leaves such results alone.
   */
  objectResults?: "json" | "ignore";
  version?: string;
}

/** One thing found: where, and the placeholder that replaces it. */
export interface Finding {
  start: number;
  end: number;
  kind: RedactionKind;
  /** `email`, `phone`, `card`, or the secret's type (`aws-access-key`, `private-key`, ...). */
  label: string;
  placeholder: string;
}

export interface RedactionResult {
  text: string;
  findings: Finding[];
}

/** Lower number wins an overlap. */
const KIND_RANK: Record<RedactionKind, number> = { secret: 0, card: 1, email: 2, phone: 3 };

// Quantifiers are bounded wherever a pattern could start at many places of one long word
// (`a.a.a.…`, base64 blobs): an unbounded one makes the scan quadratic in the text's length.
const URL_REGEX = /\b[a-z][a-z0-9+.-]{0,30}:\/\/[^\s<>"'`]+/gi;
/** Practical email characters (no `/ = ? &`, so URL query text is not swallowed into a local part). */
const EMAIL_LOCAL_CHAR = /[\p{L}\p{N}._%+-]/u;
const EMAIL_DOMAIN_CHAR = /[\p{L}\p{N}.-]/u;
/** Digit groups separated by single spaces or dashes, not touching other word characters. */
const DIGIT_RUN = /(?<![\w.,-])\d+(?:[ -]\d+)*(?![\w]|[.,]\d)/g;
/**
 * A phone-like segment: a maximal run of digits, spaces, `+ ( ) . - /` starting and ending with
 * a digit (or `+`/`(` first). Commas, semicolons and letters end it, so numbers in a list are
 * never read as one number with an extension (`(212) 736-5000, 212…`).
 */
const PHONE_SEGMENT = /(?<![\w+(])[+(]?\d[\d \t().\-/+]*\d/g;
/** Fewer digits than this cannot be a dialable number in any of the supported plans. */
const MIN_PHONE_DIGITS = 7;

/** Where emails and phone numbers are not looked for: a URL's scheme, host and path. */
function urlPathZones(text: string): [number, number][] {
  const zones: [number, number][] = [];
  for (const m of text.matchAll(URL_REGEX)) {
    const cut = m[0].search(/[?#]/);
    zones.push([m.index, m.index + (cut === -1 ? m[0].length : cut)]);
  }
  return zones;
}

const inZones = (zones: [number, number][], start: number, end: number) =>
  zones.some(([a, b]) => start >= a && end <= b);

function findSecrets(text: string): Finding[] {
  const found: Finding[] = [];
  for (const { label, regex, group } of SECRET_PATTERNS) {
    for (const m of text.matchAll(regex)) {
      const span: readonly [number, number] | undefined =
        group === undefined ? [m.index, m.index + m[0].length] : m.indices?.[group];
      if (span === undefined) continue;
      found.push(finding(span[0], span[1], "secret", label, `[secret:${label}]`));
    }
  }
  return found;
}

/** The operator's own patterns: redacted like secrets, whatever `kinds` says. */
function findExtra(text: string, extra: readonly CompiledExtra[]): Finding[] {
  const found: Finding[] = [];
  for (const { label, regex } of extra) {
    for (const m of text.matchAll(regex)) {
      if (m[0].length === 0) continue;
      found.push(finding(m.index, m.index + m[0].length, "secret", label, `[${label}]`));
    }
  }
  return found;
}

function findCards(text: string): Finding[] {
  const found: Finding[] = [];
  for (const m of text.matchAll(DIGIT_RUN)) {
    // The run's groups with their offsets; from each group, try the windows of consecutive
    // groups that hold 13-19 digits, longest first (at most 19 groups: linear in the run).
    const groups: { start: number; end: number; digits: string }[] = [];
    for (const g of m[0].matchAll(/\d+/g)) {
      groups.push({ start: m.index + g.index, end: m.index + g.index + g[0].length, digits: g[0] });
    }
    let i = 0;
    while (i < groups.length) {
      const windows: { end: number; digits: string }[] = [];
      let digits = "";
      for (let j = i; j < groups.length && digits.length + groups[j]!.digits.length <= 19; j++) {
        digits += groups[j]!.digits;
        if (digits.length >= 13) windows.push({ end: j, digits });
      }
      const card = windows.reverse().find((w) => validator.isCreditCard(w.digits));
      if (card === undefined) {
        i++;
        continue;
      }
      found.push(finding(groups[i]!.start, groups[card.end]!.end, "card", "card", "[card]"));
      i = card.end + 1;
    }
  }
  return found;
}

function findEmails(text: string, zones: [number, number][]): Finding[] {
  const found: Finding[] = [];
  // Candidates grow out of each "@" (bounded: 64 characters of local part, 253 of domain), so
  // the scan stays linear however long the words around are.
  for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && EMAIL_LOCAL_CHAR.test(text[start - 1]!)) start--;
    let end = at + 1;
    while (end < text.length && end - at <= 253 && EMAIL_DOMAIN_CHAR.test(text[end]!)) end++;
    // Trim what cannot start a local part or end a domain (sentence dots, list dashes).
    while (start < at && /[.\-%+]/.test(text[start]!)) start++;
    while (end > at + 1 && /[.-]/.test(text[end - 1]!)) end--;
    if (start === at || end === at + 1 || inZones(zones, start, end)) continue;
    const candidate = text.slice(start, end);
    if (validator.isEmail(candidate, { allow_utf8_local_part: true, require_tld: true })) {
      found.push(finding(start, end, "email", "email", "[email]"));
    }
  }
  return found;
}

function findPhones(
  text: string,
  countries: readonly CountryCode[],
  zones: [number, number][],
  taken: ReadonlySet<string>,
): Finding[] {
  const found: Finding[] = [];
  for (const m of text.matchAll(PHONE_SEGMENT)) {
    if (taken.has(`${m.index}:${m.index + m[0].length}`)) continue;
    // Cheap prefilter: dates, amounts and short ids never reach the (costlier) validator.
    if (m[0].replace(/\D/g, "").length < MIN_PHONE_DIGITS) continue;
    const seen = new Set<string>();
    for (const country of countries) {
      for (const hit of findPhoneNumbersInText(m[0], country)) {
        const start = m.index + hit.startsAt;
        const end = m.index + hit.endsAt;
        const key = `${start}:${end}`;
        if (seen.has(key) || inZones(zones, start, end)) continue;
        seen.add(key);
        found.push(finding(start, end, "phone", "phone", "[phone]"));
      }
    }
  }
  return found;
}

function finding(
  start: number,
  end: number,
  kind: RedactionKind,
  label: string,
  placeholder: string,
): Finding {
  return { start, end, kind, label, placeholder };
}

const isList = (value: unknown): value is readonly unknown[] => Array.isArray(value);

interface CompiledExtra {
  label: string;
  regex: RegExp;
}

/** A reusable redactor with its options checked once. */
export class Redactor {
  private readonly kinds: ReadonlySet<RedactionKind>;
  private readonly countries: readonly CountryCode[];
  private readonly extra: readonly CompiledExtra[];

  constructor(options: RedactOptions = {}, policy = "pii-redactor") {
    const kinds: readonly unknown[] = options.kinds ?? REDACTION_KINDS;
    if (!isList(kinds) || kinds.some((k) => !REDACTION_KINDS.includes(k as RedactionKind))) {
      throw configError(policy, `kinds must be a list of ${REDACTION_KINDS.join(", ")}`);
    }
    this.kinds = new Set(kinds as readonly RedactionKind[]);
    const countries: readonly unknown[] = options.phoneCountries ?? ["US"];
    if (
      !isList(countries) ||
      countries.some((c) => typeof c !== "string" || !/^[A-Z]{2}$/.test(c))
    ) {
      throw configError(policy, "phoneCountries must be ISO 3166-1 alpha-2 codes such as US, GB");
    }
    this.countries = countries as readonly CountryCode[];
    this.extra = (options.extraPatterns ?? []).map((p, i) => {
      if (typeof p?.label !== "string" || !/^[a-z0-9][a-z0-9:-]{0,40}$/.test(p.label)) {
        throw configError(
          policy,
          `extraPatterns[${i}].label must be lowercase letters, digits, - and :`,
        );
      }
      const base = toRegExp(policy, `extraPatterns[${i}].pattern`, p.pattern);
      return {
        label: p.label,
        regex: new RegExp(base.source, `${base.flags.replace(/[gy]/g, "")}g`),
      };
    });
  }

  /** Every non-overlapping finding in `text`, in text order. */
  find(text: string): Finding[] {
    if (text.length === 0) return [];
    const zones = this.kinds.has("email") || this.kinds.has("phone") ? urlPathZones(text) : [];
    const all: Finding[] = [
      ...(this.kinds.has("secret") ? findSecrets(text) : []),
      ...findExtra(text, this.extra),
      ...(this.kinds.has("card") ? findCards(text) : []),
      ...(this.kinds.has("email") ? findEmails(text, zones) : []),
    ];
    if (this.kinds.has("phone")) {
      // A segment already taken whole by a card, secret or email would lose the overlap anyway:
      // skip validating it (card numbers look like phone segments and cost the most).
      const taken = new Set(all.map((f) => `${f.start}:${f.end}`));
      all.push(...findPhones(text, this.countries, zones, taken));
    }
    // Stable: within a kind, detector order (most specific first), then position.
    const ranked = all
      .map((f, order) => ({ f, order }))
      .sort((a, b) => KIND_RANK[a.f.kind] - KIND_RANK[b.f.kind] || a.order - b.order)
      .map(({ f }) => f);
    // Kept findings never overlap and stay sorted by start, so a new one only needs checking
    // against its two neighbours.
    const kept: Finding[] = [];
    for (const f of ranked) {
      if (f.end <= f.start) continue;
      let lo = 0;
      let hi = kept.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (kept[mid]!.start < f.start) lo = mid + 1;
        else hi = mid;
      }
      const before = kept[lo - 1];
      const after = kept[lo];
      if (
        (before !== undefined && before.end > f.start) ||
        (after !== undefined && after.start < f.end)
      )
        continue;
      kept.splice(lo, 0, f);
    }
    return kept;
  }

  redact(text: string): RedactionResult {
    const findings = this.find(text);
    if (findings.length === 0) return { text, findings };
    let out = "";
    let at = 0;
    for (const f of findings) {
      out += text.slice(at, f.start) + f.placeholder;
      at = f.end;
    }
    return { text: out + text.slice(at), findings };
  }
}

/** One-off redaction with default options (builds a Redactor each call). */
export function redactText(text: string, options?: RedactOptions): RedactionResult {
  return new Redactor(options).redact(text);
}

function summary(findings: readonly Finding[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of findings) counts[f.label] = (counts[f.label] ?? 0) + 1;
  return counts;
}

export function piiRedactor(options: PiiRedactorOptions = {}): Policy {
  const name = checkPolicyName(options.name, "pii-redactor");
  const redactor = new Redactor(options, name);
  const objectResults = options.objectResults ?? "json";
  if (objectResults !== "json" && objectResults !== "ignore") {
    throw configError(name, `objectResults must be "json" or "ignore"`);
  }

  return definePolicy({
    name,
    version: options.version ?? "1.0.0",
    hooks: {
      before_tool_result(event, _ctx, { logger }) {
        const findings: Finding[] = [];
        const redact = (text: string) => {
          const r = redactor.redact(text);
          findings.push(...r.findings);
          return r.text;
        };
        const shape = resultShape(event.result);
        let content: string | { type: string; [key: string]: unknown }[] | undefined;
        switch (shape.kind) {
          case "none":
            return undefined;
          case "text":
            content = redact(shape.text);
            break;
          case "parts":
            content = shape.parts.map((part) =>
              isTextPart(part) ? { ...part, text: redact(part.text) } : part,
            );
            break;
          case "value":
            if (objectResults === "ignore") return undefined;
            content = JSON.stringify(mapStringLeaves(shape.value, redact));
            break;
        }
        if (findings.length === 0) return undefined;
        logger.info({ tool: event.toolName, redacted: summary(findings) }, "redacted tool result");
        return { content };
      },

      before_response_emit(event, _ctx, { logger }) {
        const content = redactor.redact(event.content);
        const all = event.allContent.map((text) => redactor.redact(text));
        const found = content.findings.length + all.reduce((n, r) => n + r.findings.length, 0);
        if (found === 0) return undefined;
        logger.info(
          { redacted: summary([...content.findings, ...all.flatMap((r) => r.findings)]) },
          "redacted response",
        );
        // Both fields: `content` alone would leave the same text unredacted in allContent
        // (and setting one locks the other for lower-priority policies).
        return { content: content.text, allContent: all.map((r) => r.text) };
      },
    },
  });
}

/** The demo's instance: every kind, US national phone formats (international ones always). */
export const defaultPiiRedactor: Policy = piiRedactor();
