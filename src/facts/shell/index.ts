/**
 * Shell commands as facts, from a real bash parser (docs/facts.md, "Shell"). Load the parser once
 * at startup with `await loadShellParser()`; `shellFacts(command)` is synchronous after that.
 */
export { shellFacts, type ShellFactsOptions } from "./analyse.js";
export { DEFAULT_SHELL_LIMITS, type ShellLimits } from "./limits.js";
export {
  createShellFactsMemo,
  type MemoisedShellFacts,
  type ShellFactsMemoOptions,
} from "./memo.js";
export { loadShellParser, shellParserLoaded } from "./parser.js";
export type { PathContext } from "./paths.js";
export * from "./schema.js";
