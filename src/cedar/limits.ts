/**
 * What a Cedar policy set may be before the engine sees it. Cedar's parser and evaluator recurse
 * once per level of an expression inside WebAssembly, whose stack is small and whose failure is
 * not an error but a trap that leaves the instance unusable: parentheses nested 150 deep or a
 * `||` chain of 400 terms trap it (measured with cedar-wasm 4.13). So the text is measured first,
 * in one loop over its characters (no recursion: the depth is the attacker's to choose), and a
 * set over a limit is refused with its own code before any Cedar code runs. The limits leave a
 * wide margin under the trap (depth 32 brackets plus 128 terms, against ~150 and ~300), and the
 * rule and byte limits bound the time the engine spends parsing a set (~40 µs per rule).
 */
import { HookbusError, type ErrorCode, type ValidationIssue } from "../foundation/errors.js";

/** Brackets `(`, `[`, `{` open at once, anywhere in a policy (annotations and scope included). */
export const MAX_CEDAR_DEPTH = 32;
/** Operators in one policy (`||`, `&&`, comparisons, arithmetic, `.`, `in`, `has`, `like`, `is`, `if`). */
export const MAX_CEDAR_TERMS = 128;
/** Policies (statements ending in `;`) in one set. */
export const MAX_CEDAR_RULES = 1000;
/** UTF-8 bytes of one set's text. */
export const MAX_CEDAR_SET_BYTES = 256 * 1024;

export type CedarLimit = "depth" | "terms" | "rules" | "bytes";

export const CEDAR_LIMIT_CODES: Readonly<Record<CedarLimit, ErrorCode>> = {
  depth: "HOOKBUS_CEDAR_TOO_DEEP",
  terms: "HOOKBUS_CEDAR_TOO_MANY_TERMS",
  rules: "HOOKBUS_CEDAR_TOO_MANY_RULES",
  bytes: "HOOKBUS_CEDAR_TOO_LARGE",
};

export interface CedarLimitIssue extends ValidationIssue {
  limit: CedarLimit;
}

const WORD_OPERATORS = new Set(["in", "has", "like", "is", "if"]);
const TWO_CHAR_OPERATORS = new Set(["||", "&&", "==", "!=", "<=", ">="]);
const ONE_CHAR_OPERATORS = new Set(["<", ">", "+", "-", "*", "."]);

/** Scanner state: one pass, constant memory besides the issues found. */
interface Scan {
  depth: number;
  /** Deepest nesting and operator count of the policy being read. */
  maxDepth: number;
  terms: number;
  /** Policies ended so far (the one being read is number `rules`, from 0). */
  rules: number;
  issues: CedarLimitIssue[];
}

/** Every limit the text exceeds (empty when it is within all of them). */
export function cedarLimitIssues(text: string): CedarLimitIssue[] {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_CEDAR_SET_BYTES) {
    // Not scanned further: the scan itself must stay bounded.
    return [issue("bytes", "", `${bytes} bytes; at most ${MAX_CEDAR_SET_BYTES}`)];
  }
  const scan: Scan = { depth: 0, maxDepth: 0, terms: 0, rules: 0, issues: [] };
  let i = 0;
  while (i < text.length) i = step(text, i, scan);
  endPolicy(scan); // a last statement without `;` is still measured
  if (scan.rules > MAX_CEDAR_RULES) {
    scan.issues.push(issue("rules", "", `${scan.rules} policies; at most ${MAX_CEDAR_RULES}`));
  }
  return scan.issues;
}

/** Throws the first limit's own code, every issue in `details.issues`; returns when within all. */
export function assertCedarLimits(text: string, source: string): void {
  const error = cedarLimitError(cedarLimitIssues(text), source);
  if (error !== undefined) throw error;
}

/** The error for these issues (coded by the first one's limit), or undefined when there are none. */
export function cedarLimitError(
  issues: readonly CedarLimitIssue[],
  source: string,
): HookbusError | undefined {
  const first = issues[0];
  if (first === undefined) return undefined;
  const list = issues.map((i) => `  ${i.path || "(set)"}: ${i.message}`).join("\n");
  return new HookbusError(
    CEDAR_LIMIT_CODES[first.limit],
    `${source} is over a Cedar limit (docs/limits.md, "Cedar policy sets"):\n${list}`,
    {
      source,
      limit: first.limit,
      issues: issues.map(({ path, rule, message }) => ({ path, rule, message })),
    },
  );
}

const OPEN = new Set([0x28, 0x5b, 0x7b]); // ( [ {
const CLOSE = new Set([0x29, 0x5d, 0x7d]); // ) ] }
const QUOTE = 0x22;
const SLASH = 0x2f;
const SEMICOLON = 0x3b;

/** Reads one token (or skips one string, comment or blank) from `i`; returns where the next starts. */
function step(text: string, i: number, scan: Scan): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return skipString(text, i);
  if (c === SLASH && text.charCodeAt(i + 1) === SLASH) return skipLine(text, i);
  if (OPEN.has(c)) {
    scan.depth++;
    if (scan.depth > scan.maxDepth) scan.maxDepth = scan.depth;
    return i + 1;
  }
  if (CLOSE.has(c)) {
    scan.depth = Math.max(0, scan.depth - 1);
    return i + 1;
  }
  if (c === SEMICOLON && scan.depth === 0) {
    endPolicy(scan);
    scan.rules++;
    return i + 1;
  }
  if (isWordStart(c)) return readWord(text, i, scan);
  if (TWO_CHAR_OPERATORS.has(text.slice(i, i + 2))) {
    scan.terms++;
    return i + 2;
  }
  if (ONE_CHAR_OPERATORS.has(text[i] as string)) scan.terms++;
  return i + 1;
}

function endPolicy(scan: Scan): void {
  const path = `policy${scan.rules}`;
  if (scan.maxDepth > MAX_CEDAR_DEPTH) {
    scan.issues.push(
      issue("depth", path, `brackets nested ${scan.maxDepth} deep; at most ${MAX_CEDAR_DEPTH}`),
    );
  }
  if (scan.terms > MAX_CEDAR_TERMS) {
    scan.issues.push(
      issue("terms", path, `${scan.terms} operators in one policy; at most ${MAX_CEDAR_TERMS}`),
    );
  }
  scan.maxDepth = scan.depth;
  scan.terms = 0;
}

/** Past the closing quote (or the end of the text); `\\` escapes the next character. */
function skipString(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) break;
    j += c === 0x5c ? 2 : 1;
  }
  return j + 1;
}

function skipLine(text: string, i: number): number {
  const end = text.indexOf("\n", i);
  return end === -1 ? text.length : end + 1;
}

function isWordStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f; // a-z A-Z _
}

function isWordChar(c: number): boolean {
  return isWordStart(c) || (c >= 0x30 && c <= 0x39);
}

function readWord(text: string, i: number, scan: Scan): number {
  let j = i + 1;
  while (j < text.length && isWordChar(text.charCodeAt(j))) j++;
  if (j - i <= 4 && WORD_OPERATORS.has(text.slice(i, j))) scan.terms++;
  return j;
}

function issue(limit: CedarLimit, path: string, message: string): CedarLimitIssue {
  return { limit, path, rule: `cedar_${limit}`, message };
}
