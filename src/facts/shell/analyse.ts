/**
 * One command text → its facts. Parses, collects the simple commands, unwraps each, and follows
 * every nested script (`sh -c`, `eval`, `| sh` of a static text, a one-liner's `system("…")`) with
 * the same code, one nesting level deeper. Synchronous and bounded: see limits.ts.
 */
import type { Node } from "web-tree-sitter";
import { FactsAccumulator } from "./accumulator.js";
import { CommandCollector, type RawCommand } from "./collect.js";
import type { Analysis, Final } from "./context.js";
import { analyseInvocation } from "./invocation.js";
import { countTokens, DEFAULT_SHELL_LIMITS, ShellLimitError, type ShellLimits } from "./limits.js";
import { HookbusError } from "../../foundation/errors.js";
import { parseBash, shellParserLoaded } from "./parser.js";
import { plainCommands } from "./plain.js";
import { plainTree, type ShellNode } from "./tree.js";
import type { PathContext } from "./paths.js";
import type { ShellFacts } from "./schema.js";
import { substitutionOutput } from "./static-eval.js";
import type { WordEnv } from "./words.js";
import { feedsOfPipelines, feedsOfWrittenFiles } from "./pipelines.js";

export interface ShellFactsOptions extends PathContext {
  limits?: Partial<ShellLimits>;
}

class SyntaxProblem extends Error {}

function firstError(node: Node): Node | undefined {
  if (node.isError || node.isMissing) return node;
  for (const child of node.children) {
    if (child?.hasError === true || child?.isMissing === true) return firstError(child);
  }
  return undefined;
}

function collect(analysis: Analysis, text: string, via: string[]): RawCommand[] {
  const tree = parseBash(text);
  try {
    const root = tree.rootNode;
    if (root.hasError) {
      const at = firstError(root);
      throw new SyntaxProblem(`does not parse near offset ${at?.startIndex ?? 0}`);
    }
    const { limits, paths } = analysis;
    const substitute = (node: ShellNode, env: WordEnv): string | undefined =>
      substitutionOutput(node, env, limits.maxLength);
    const collector = new CommandCollector(limits, paths.home, analysis.vars, substitute);
    return collector.collect(plainTree(tree, text), via);
  } finally {
    tree.delete();
  }
}

function analyseScript(analysis: Analysis, text: string, via: string[], nesting: number): void {
  const { acc, limits } = analysis;
  if (nesting > limits.maxNesting) {
    throw new ShellLimitError("too-deep", `scripts nested more than ${limits.maxNesting} deep`);
  }
  acc.parsedLength += text.length;
  if (acc.parsedLength > limits.maxLength) {
    throw new ShellLimitError("too-long", `more than ${limits.maxLength} characters to parse`);
  }
  const tokens = countTokens(text, limits.maxTokens);
  if (tokens > limits.maxTokens) {
    throw new ShellLimitError("too-many-nodes", `more than ${limits.maxTokens} tokens`);
  }
  const raws =
    plainCommands(text, via, analysis.paths.home, limits) ?? collect(analysis, text, via);
  const finals = new Map<RawCommand, Final>();
  for (const raw of raws) finals.set(raw, analyseInvocation(analysis, raw, nesting));
  feedsOfPipelines(analysis, raws, finals, nesting);
}

function unparsedOf(error: unknown, acc: FactsAccumulator, via: string): void {
  const where = via === "" ? "" : ` (in ${via})`;
  if (error instanceof ShellLimitError) {
    acc.unparsed = {
      reason: error.reason,
      code: "HOOKBUS_SHELL_LIMIT",
      detail: error.detail + where,
    };
  } else if (error instanceof SyntaxProblem) {
    acc.unparsed = {
      reason: "syntax",
      code: "HOOKBUS_SHELL_UNPARSED",
      detail: error.message + where,
    };
  } else throw error;
}

/**
 * The facts of one shell command. Throws only `HOOKBUS_SHELL_PARSER_UNAVAILABLE` (call
 * `await loadShellParser()` first); a command that does not parse or is over a limit gets
 * `unparsed`, with the facts found before the problem kept.
 */
export function shellFacts(command: string, options: ShellFactsOptions = {}): ShellFacts {
  // Checked here, not only in the parser: a plain command never reaches it, and a forgotten load
  // must fail on the first call, not on the first complicated one.
  if (!shellParserLoaded()) {
    throw new HookbusError(
      "HOOKBUS_SHELL_PARSER_UNAVAILABLE",
      "shell facts asked for before `await loadShellParser()` finished",
    );
  }
  const acc = new FactsAccumulator();
  const limits = { ...DEFAULT_SHELL_LIMITS, ...options.limits };
  const vars = new Map<string, string>();
  const projectRoot = options.projectRoot ?? options.cwd;
  if (options.home !== undefined) vars.set("HOME", options.home);
  let currentVia = "";
  const analysis: Analysis = {
    acc,
    limits,
    // The project stays where the command started, whatever `cd` does inside it.
    paths: projectRoot === undefined ? options : { ...options, projectRoot },
    vars,
    script(text, via, nesting) {
      currentVia = via.join(" › ");
      analyseScript(analysis, text, via, nesting);
    },
  };
  if (command.length > limits.maxLength) {
    acc.unparsed = {
      reason: "too-long",
      code: "HOOKBUS_SHELL_LIMIT",
      detail: `${command.length} characters, over ${limits.maxLength}`,
    };
    return acc.finish();
  }
  try {
    analyseScript(analysis, command, [], 0);
    feedsOfWrittenFiles(analysis);
  } catch (error) {
    unparsedOf(error, acc, currentVia);
  }
  return acc.finish();
}
