/**
 * Every bound on the work one command may cost, checked before and while it is analysed. A command
 * over one gets `unparsed` with a `HOOKBUS_SHELL_LIMIT` code: the policy library holds it for
 * approval, so a limit can never be used to slip a command past a rule.
 */
import type { UnparsedReason } from "./schema.js";

export interface ShellLimits {
  /** Characters of command text handed to the parser (nested `sh -c` scripts included). */
  maxLength: number;
  /**
   * Weighted tokens found by a scan before parsing (a `|` counts 8, an expansion 3): bounds the
   * parser's work on any input.
   */
  maxTokens: number;
  /** Depth of the syntax tree the walk enters. */
  maxTreeDepth: number;
  /** Simple commands collected, over the command and every script nested in it. */
  maxCommands: number;
  /** Scripts inside scripts (`sh -c`, `eval`, `| sh`, one-liner `system(…)`), and wrappers. */
  maxNesting: number;
}

export const DEFAULT_SHELL_LIMITS: ShellLimits = Object.freeze({
  maxLength: 16_384,
  maxTokens: 768,
  maxTreeDepth: 128,
  maxCommands: 256,
  maxNesting: 8,
});

export class ShellLimitError extends Error {
  override readonly name = "ShellLimitError";
  constructor(
    readonly reason: Exclude<UnparsedReason, "syntax">,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/** Characters that end a word or are an operator of their own. */
function isBoundary(c: number): boolean {
  return (
    c === 32 ||
    c === 9 ||
    c === 10 ||
    c === 59 ||
    c === 124 ||
    c === 38 ||
    c === 40 ||
    c === 41 ||
    c === 60 ||
    c === 62 ||
    c === 36 ||
    c === 96 ||
    c === 123 ||
    c === 125
  );
}

/** After `<<`: the end of the here-document's body, or -1 (the parser will say what is wrong). */
function heredocEnd(text: string, at: number): number {
  const head = /^<<-?\s*(['"]?)([A-Za-z0-9_.-]+)\1/u.exec(text.slice(at, at + 260));
  if (head?.[2] === undefined) return -1;
  const bodyStart = text.indexOf("\n", at);
  if (bodyStart === -1) return -1;
  const delimiter = head[2];
  let line = bodyStart + 1;
  while (line < text.length) {
    const next = text.indexOf("\n", line);
    const end = next === -1 ? text.length : next;
    if (text.slice(line, end).replace(/^\t+/u, "") === delimiter) return end;
    line = end + 1;
  }
  return -1;
}

/**
 * Weights set from `npm run bench:facts`: a pipeline stage costs the parser several times a plain
 * word (its cost grows faster than the number of stages); an expansion costs the parser about
 * twice a word, and the analysis as much again (it is valued, `$(…)` evaluated).
 */
const PIPE_WEIGHT = 8;
const EXPANSION_WEIGHT = 3;

function expansions(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 36 || c === 96) count += EXPANSION_WEIGHT;
  }
  return count;
}

/**
 * Counts tokens without allocating per character: the parser's cost grows with tokens, so this
 * bounds it before it starts. Single-quoted text and a quoted here-document's body are one token
 * each (the parser reads them cheaply); inside double quotes only `$` and backquotes count.
 */
export function countTokens(text: string, stopAfter: number): number {
  let tokens = 0;
  let inWord = false;
  let inDouble = false;
  for (let i = 0; i < text.length && tokens <= stopAfter; i++) {
    const c = text.charCodeAt(i);
    if (c === 92) {
      i += 1; // a backslash quotes the next character
      inWord = true;
    } else if (inDouble) {
      if (c === 34) inDouble = false;
      else if (c === 36 || c === 96) tokens += EXPANSION_WEIGHT;
    } else if (c === 39) {
      const close = text.indexOf("'", i + 1);
      i = close === -1 ? text.length : close;
      tokens += 1;
    } else if (c === 34) {
      inDouble = true;
      tokens += 1;
    } else if (c === 60 && text.charCodeAt(i + 1) === 60 && text.charCodeAt(i + 2) !== 60) {
      const end = heredocEnd(text, i);
      tokens += 2;
      if (end !== -1) {
        // A quoted body is literal; an unquoted one costs only its expansions.
        if (!/^<<-?\s*['"]/u.test(text.slice(i, i + 4))) tokens += expansions(text, i, end);
        i = end;
      }
    } else if (isBoundary(c)) {
      if (c === 124) tokens += PIPE_WEIGHT;
      else if (c === 36 || c === 96) tokens += EXPANSION_WEIGHT;
      else if (inWord || c !== 32) tokens += 1;
      inWord = false;
    } else inWord = true;
  }
  return tokens + (inWord ? 1 : 0);
}
