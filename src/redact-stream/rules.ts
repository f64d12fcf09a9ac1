/**
 * What the edge redacts in a streamed answer, and the bounded form each rule takes there.
 *
 * A streamed answer cannot be redacted by a regular expression over the whole text: the text is
 * not whole yet. So every rule is matched inside a window: a match starting at position p is
 * looked for in the `maxLength` characters from p (plus a short look-behind), and the stream
 * holds back only what an unfinished window still covers. A rule's `start` is what every match
 * begins with; where it cannot match, the position is settled after only `start`'s few
 * characters, so ordinary prose is held back by tens of characters, not by the longest window.
 *
 * The table mirrors SECRET_PATTERNS (src/vocabulary/secrets.ts) with each unbounded repetition
 * capped by the window, plus emails. Two ways keep a long secret whole past its window: `tail`
 * (a token that fills its window goes on being redacted while its characters continue) and
 * `until` (a PEM block is redacted up to its END line, or to the end of the answer).
 */
import { HookbusError } from "../foundation/errors.js";

/** Characters a look-behind (`(?<!…)`, `\b`) of a rule may see before its start. */
export const LOOK_BEHIND = 16;
/** The largest window a rule may ask for: the stream never holds back more than this. */
export const MAX_RULE_WINDOW = 4096;

export interface StreamRule {
  /** The finding's type: `openai-key`, `email`, ... */
  label: string;
  /** Replaces the redacted text: `[secret:openai-key]`. */
  placeholder: string;
  /** The whole match, found only where `start` matches. */
  regex: RegExp;
  /** What every match begins with: a short pattern without captures or end assertions. */
  start: RegExp;
  /** The most characters `start` can span. */
  startLength: number;
  /** The window a match is looked for in (the match and what it looks ahead at). */
  maxLength: number;
  /** Only this capture group is redacted (the rest is context such as `password=`). */
  group?: number;
  /** One character of the token: a match that fills its window goes on while these follow. */
  tail?: RegExp;
  /** The text that ends the redaction after the match (PEM END line); none: the answer's end. */
  until?: (match: RegExpExecArray) => string;
}

const secret = (label: string) => `[secret:${label}]`;

/** The edge's rules, most specific first: on equal starts the earlier one names the placeholder. */
export const EDGE_RULES: readonly StreamRule[] = [
  {
    label: "private-key",
    placeholder: secret("private-key"),
    regex: /-----BEGIN ((?:[A-Z0-9]{1,16} ){0,4}PRIVATE KEY(?: BLOCK)?)-----/,
    start: /-----BEGIN /,
    startLength: 11,
    maxLength: 128,
    until: (m) => `-----END ${m[1]!}-----`,
  },
  {
    label: "aws-access-key",
    placeholder: secret("aws-access-key"),
    regex: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/,
    start: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])/,
    startLength: 4,
    maxLength: 21,
  },
  {
    label: "aws-secret-key",
    placeholder: secret("aws-secret-key"),
    regex:
      /\b(?:aws_?secret_?access_?key|secret_?access_?key)["']?\s{0,32}[:=]\s{0,32}["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/i,
    start: /\b(?:aws_?secret|secret_?access)/i,
    startLength: 13,
    maxLength: 160,
    group: 1,
  },
  {
    label: "github-token",
    placeholder: secret("github-token"),
    regex: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/,
    start: /\b(?:gh[pousr]_|github_pat_)/,
    startLength: 11,
    maxLength: 267,
  },
  {
    label: "slack-token",
    placeholder: secret("slack-token"),
    regex: /\bxox[abposre]-[A-Za-z0-9-]{10,}/,
    start: /\bxox[abposre]-/,
    startLength: 5,
    maxLength: 256,
    tail: /[A-Za-z0-9-]/,
  },
  {
    label: "slack-webhook",
    placeholder: secret("slack-webhook"),
    regex: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]+/,
    start: /https:\/\/hooks\.slack\.com\//,
    startLength: 24,
    maxLength: 256,
    tail: /[A-Za-z0-9/_-]/,
  },
  {
    label: "anthropic-key",
    placeholder: secret("anthropic-key"),
    regex: /\bsk-ant-[A-Za-z0-9_-]{20,}/,
    start: /\bsk-ant-/,
    startLength: 7,
    maxLength: 256,
    tail: /[A-Za-z0-9_-]/,
  },
  {
    label: "openai-key",
    placeholder: secret("openai-key"),
    regex:
      /(?<![A-Za-z0-9_-])sk-(?=[A-Za-z0-9_-]{0,256}\d)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/,
    start: /(?<![A-Za-z0-9_-])sk-/,
    startLength: 3,
    maxLength: 272,
    tail: /[A-Za-z0-9_-]/,
  },
  {
    label: "stripe-key",
    placeholder: secret("stripe-key"),
    regex: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b/,
    start: /\b(?:sk|rk|pk)_(?:live|test)_/,
    startLength: 8,
    maxLength: 256,
    tail: /[A-Za-z0-9]/,
  },
  {
    label: "google-api-key",
    placeholder: secret("google-api-key"),
    regex: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/,
    start: /\bAIza/,
    startLength: 4,
    maxLength: 40,
  },
  {
    label: "jwt",
    placeholder: secret("jwt"),
    regex: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
    start: /(?<![A-Za-z0-9_-])eyJ/,
    startLength: 3,
    maxLength: 1024,
    tail: /[A-Za-z0-9_-]/,
  },
  {
    label: "bearer-token",
    placeholder: secret("bearer-token"),
    regex: /\bBearer\s{1,32}([A-Za-z0-9\-._~+/]{16,}=*)/i,
    start: /\bBearer\s/i,
    startLength: 7,
    maxLength: 256,
    group: 1,
    tail: /[A-Za-z0-9\-._~+/=]/,
  },
  {
    label: "url-password",
    placeholder: secret("url-password"),
    regex: /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/?#@]{1,256}:([^\s/?#@]{1,256})@/i,
    start: /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}:\/\//i,
    startLength: 34,
    maxLength: 548,
    group: 1,
  },
  {
    label: "credential",
    placeholder: secret("credential"),
    regex:
      /\b(?:api[_-]?key|apikey|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|password|passwd)["']?\s{0,32}[:=]\s{0,32}["']?([^\s"'`,;]{6,})/i,
    start:
      /\b(?:api[_-]?key|apikey|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|password|passwd)/i,
    startLength: 13,
    maxLength: 256,
    group: 1,
    tail: /[^\s"'`,;]/,
  },
  {
    label: "email",
    placeholder: "[email]",
    regex:
      /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/,
    start: /[A-Za-z0-9._%+-]{1,64}@/,
    startLength: 65,
    maxLength: 700,
  },
];

function ruleError(rule: StreamRule, problem: string): HookbusError {
  return new HookbusError(
    "HOOKBUS_STREAM_RULE_INVALID",
    `streaming redaction rule "${rule.label}": ${problem}`,
    { rule: rule.label },
  );
}

/** Refuses a rule the stream cannot hold back a bounded window for. */
export function checkStreamRule(rule: StreamRule): void {
  const window = rule.maxLength;
  if (!Number.isInteger(window) || window < 1 || window > MAX_RULE_WINDOW) {
    throw ruleError(rule, `maxLength must be an integer from 1 to ${MAX_RULE_WINDOW}`);
  }
  if (!Number.isInteger(rule.startLength) || rule.startLength < 1 || rule.startLength > window) {
    throw ruleError(rule, "startLength must be an integer from 1 to maxLength");
  }
  if (plainFlags(rule.start) !== plainFlags(rule.regex)) {
    throw ruleError(rule, "start and regex must have the same flags");
  }
  if (
    rule.start.test("") ||
    new RegExp(`${rule.start.source}|`, rule.start.flags).exec("")!.length !== 1
  ) {
    throw ruleError(rule, "start must match at least one character and not capture");
  }
  if (new RegExp(rule.regex.source, rule.regex.flags.replace(/[gy]/g, "")).test("")) {
    throw ruleError(rule, "the pattern matches the empty text");
  }
  if (rule.tail !== undefined && rule.tail.test("")) {
    throw ruleError(rule, "tail must match one character");
  }
}

/** A regex's flags without those that only say how it is run (`g`, `y`, `d`). */
export function plainFlags(regex: RegExp): string {
  return regex.flags.replace(/[gyd]/g, "");
}
