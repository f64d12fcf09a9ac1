/**
 * Every bound on the work one command may cost, checked before and while it is analysed. A command
 * over one gets `unparsed` with a `HOOKBUS_SHELL_LIMIT` code: the policy library holds it for
 * approval, so a limit can never be used to slip a command past a rule.
 */
import type { UnparsedReason } from "./schema.js";

export interface ShellLimits {
  /** Characters of command text handed to the parser (nested `sh -c` scripts included). */
  maxLength: number;
  /** Lexical tokens found by a scan before parsing: bounds the parser's work on any input. */
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
  maxTokens: 2_048,
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

/**
 * Counts token boundaries (a blank or an operator character after a word character) without
 * allocating: the parser's cost grows with tokens, so this bounds it before it starts.
 */
export function countTokens(text: string, stopAfter: number): number {
  let tokens = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const boundary =
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
      c === 125;
    if (boundary) {
      if (inWord || c !== 32) tokens += 1;
      inWord = false;
      if (tokens > stopAfter) return tokens;
    } else inWord = true;
  }
  return tokens + (inWord ? 1 : 0);
}
