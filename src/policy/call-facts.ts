/**
 * The one fact set of a call (issue 30 item 5, docs/facts.md "Where the facts go"): the
 * coordinator computes it once per modifying call and hands the same object to Cedar, to every
 * worker (the policy request's `facts`) and to the record; replay and `policy test` compute it
 * with this same function and the same options from the recorded event, so they see what the
 * live decision saw. Synchronous and bounded by the facts modules' limits: a command over a limit
 * is described as `unparsed`, never dropped, and the call is still decided.
 */
import { computeActionFacts, MAX_PATH_CHARS, type ActionFacts } from "../facts/index.js";
import { loadShellParser, shellFacts, type ShellFacts } from "../facts/shell/index.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import type { ToolVocabulary } from "../vocabulary/vocabulary.js";

/** The fact set as it crosses the wire and lands in the record: shell facts in the shell slot. */
export type CallFacts = ActionFacts<ShellFacts>;

/** What a registry revision contributes: how tools are classified and which mail is internal. */
export interface CallFactsOptions {
  vocabulary?: ToolVocabulary;
  internalDomains?: readonly string[] | undefined;
}

/** How a registry revision shapes the facts: its vocabulary and its internal mail domains. */
export function factsOptionsOf(snapshot: RegistrySnapshot): CallFactsOptions {
  return {
    vocabulary: snapshot.vocabulary,
    internalDomains: snapshot.document.internalDomains,
  };
}

/**
 * The facts of one call of `hook`. The working directory and home come from the call itself
 * (`event.cwd`, as the Claude Code adapter sends it, else `context.cwd`; `context.home`), and
 * only when they are absolute paths within the path limit: anything else is left out, and paths
 * are then classified without them (`~` stays a home marker).
 */
export function callFacts(
  hook: string,
  event: Readonly<Record<string, unknown>>,
  context: Readonly<Record<string, unknown>>,
  options: CallFactsOptions = {},
): CallFacts {
  const cwd = absolutePath(event.cwd) ?? absolutePath(context.cwd);
  const home = absolutePath(context.home);
  return computeActionFacts<ShellFacts>(hook, event, {
    ...(options.vocabulary === undefined ? {} : { vocabulary: options.vocabulary }),
    ...(options.internalDomains === undefined ? {} : { internalDomains: options.internalDomains }),
    ...(cwd === undefined ? {} : { cwd }),
    ...(home === undefined ? {} : { home }),
    shellFacts: (command, where) =>
      shellFacts(command, home === undefined ? where : { ...where, home }),
  });
}

/**
 * Loads the shell parser the facts need (once per process). Every process that decides calls
 * (the coordinator, replay, `policy test`) awaits it before its first call; a failure is
 * HOOKBUS_SHELL_PARSER_UNAVAILABLE, whose message says what to install.
 */
export function loadCallFacts(): Promise<void> {
  return loadShellParser();
}

function absolutePath(value: unknown): string | undefined {
  return typeof value === "string" && value.startsWith("/") && value.length <= MAX_PATH_CHARS
    ? value
    : undefined;
}
