/**
 * Secret and credential formats: API keys and tokens of the common providers, PEM private keys,
 * bearer tokens, passwords in URLs and `password=` style assignments. One table for everything
 * that looks for secrets: the Cedar request's secret facts (`call.secrets`, `resultSecrets`,
 * `contentSecrets`: docs/cedar.md) and the example PII redactor (services/policies), which
 * replaces what the table finds. These formats have no validating library: they are patterns.
 */

export interface SecretPattern {
  /** The secret's type: `aws-access-key`, `private-key`, `credential`, ... */
  label: string;
  regex: RegExp;
  /** Only this capture group is the secret (the rest is context such as `password=`). */
  group?: number;
}

/** Secret formats, most specific first (on overlap, the earlier one wins). `group`: redact only that capture. */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    label: "private-key",
    // A truncated key (no END line) is still key material: redact to the end of the text.
    regex: /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?(?:-----END \1-----|$)/g,
  },
  { label: "aws-access-key", regex: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/g },
  {
    label: "aws-secret-key",
    regex:
      /\b(?:aws_?secret_?access_?key|secret_?access_?key)["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/dgi,
    group: 1,
  },
  {
    label: "github-token",
    regex: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g,
  },
  { label: "slack-token", regex: /\bxox[abposre]-[A-Za-z0-9-]{10,}/g },
  {
    label: "slack-webhook",
    regex: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]+/g,
  },
  { label: "anthropic-key", regex: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  {
    label: "openai-key",
    // A digit somewhere: `sk-` followed by a long hyphenated slug is prose, not a key. Starts
    // only where a run of key characters starts (not `\b`, which `-` satisfies inside a run):
    // else `sk-sk-sk-…` scans the rest of the run from every `sk-` (quadratic; 6 s at 200 KB).
    regex:
      /(?<![A-Za-z0-9_-])sk-(?=[A-Za-z0-9_-]{0,256}\d)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
  },
  { label: "stripe-key", regex: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { label: "google-api-key", regex: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  {
    label: "jwt",
    // Starts where a run of base64url starts, for the reason given for openai-key (`eyJ-eyJ-…`).
    regex: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  },
  {
    label: "bearer-token",
    regex: /\bBearer\s+([A-Za-z0-9\-._~+/]{16,}=*)/dgi,
    group: 1,
  },
  {
    label: "url-password",
    // The scheme starts where a run of scheme characters starts: from every letter of a long run
    // each start re-read up to 31 characters (0.5 s at 200 KB).
    regex: /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/?#@]{1,256}:([^\s/?#@]{1,256})@/dgi,
    group: 1,
  },
  {
    label: "credential",
    regex:
      /\b(?:api[_-]?key|apikey|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|password|passwd)["']?\s*[:=]\s*["']?([^\s"'`,;]{6,})/dgi,
    group: 1,
  },
];

/** The types of secret found in `text` (labels of SECRET_PATTERNS, in the table's order). */
export function secretKinds(text: string): string[] {
  if (text === "") return [];
  const kinds: string[] = [];
  // search() ignores the global flag and lastIndex: the shared patterns are not mutated.
  for (const { label, regex } of SECRET_PATTERNS) if (text.search(regex) !== -1) kinds.push(label);
  return kinds;
}
