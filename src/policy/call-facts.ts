/**
 * The one fact set of a call (issue 30 item 5, docs/facts.md "Where the facts go"): the
 * coordinator computes it at most once per modifying call, on first need (issue 35:
 * `callFactsOnDemand`), and hands the same object to whoever reads it: a Cedar set that reads
 * `context.facts`, the workers whose registry entry declares `facts: true`, session learning and
 * the record; replay and `policy test` compute it with this same function and the same options
 * from the recorded event, so they see what the live decision saw. Synchronous and bounded by the facts modules' limits: a command over a limit
 * is described as `unparsed`, never dropped, and the call is still decided.
 */
import { computeActionFacts, MAX_PATH_CHARS, type ActionFacts } from "../facts/index.js";
import {
  createShellFactsMemo,
  loadShellParser,
  shellFacts,
  type ShellFacts,
  type ShellFactsOptions,
} from "../facts/shell/index.js";
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
 * The facts of one call of `hook`. The working directory comes from the call itself (`event.cwd`,
 * as the Claude Code adapter sends it, else `context.cwd`), only as an absolute path within the
 * path limit. The home is never taken from the call: a claimed home of `/` would make `/etc`
 * "inside-home" instead of "system", so `~` stays a home marker, matched as home.
 */
export function callFacts(
  hook: string,
  event: Readonly<Record<string, unknown>>,
  context: Readonly<Record<string, unknown>>,
  options: CallFactsOptions = {},
): CallFacts {
  const cwd = absolutePath(event.cwd) ?? absolutePath(context.cwd);
  let read = 0;
  return computeActionFacts<ShellFacts>(hook, event, {
    ...(options.vocabulary === undefined ? {} : { vocabulary: options.vocabulary }),
    ...(options.internalDomains === undefined ? {} : { internalDomains: options.internalDomains }),
    ...(cwd === undefined ? {} : { cwd }),
    // A claimed working directory at `/`, a home or a system directory is never the project's
    // root: the shell facts decide that themselves (src/facts/project-root.ts).
    shellFacts: (command, where) => {
      read += command.length;
      return read > MAX_CALL_SHELL_CHARS
        ? overBudget(command, where)
        : rememberedFacts(command, where);
    },
  });
}

/**
 * One call's fact set under a registry revision, computed on first need: `facts()` computes it the first time and returns
 * that same object every time after; `computed()` is it when something needed it, else
 * undefined (a call whose policies read no facts never pays for them: ~12-16 µs and 0.7-4 KB of
 * record per call, docs/facts.md).
 */
export interface CallFactsOnDemand {
  facts: () => CallFacts;
  computed: () => CallFacts | undefined;
}

export function callFactsOnDemand(
  hook: string,
  event: Readonly<Record<string, unknown>>,
  context: Readonly<Record<string, unknown>>,
  snapshot: RegistrySnapshot,
): CallFactsOnDemand {
  let once: CallFacts | undefined;
  return {
    facts: () => (once ??= callFacts(hook, event, context, factsOptionsOf(snapshot))),
    computed: () => once,
  };
}

/**
 * Agents repeat commands (`npm test`, `git status`, the same build line every turn): the shell
 * facts of recent ones, by text and options, deeply frozen so no reader can change a shared
 * value (a bounded LRU, src/facts/shell/memo.ts). A repeat costs about 1 µs instead of 20–40.
 */
const rememberedFacts = createShellFactsMemo() as (
  command: string,
  options: ShellFactsOptions,
) => ShellFacts;

/**
 * The commands of one call together, in characters. Each command is bounded (16 KB parsed, a few
 * ms at worst), but an after_llm_call may hold many tool calls, each with commands: past this
 * budget the rest are `unparsed` (too long) without being read, so one call costs the decision
 * thread a bounded time, and the library holds an unparsed command for approval.
 */
export const MAX_CALL_SHELL_CHARS = 64 * 1024;

function overBudget(command: string, where: ShellFactsOptions): ShellFacts {
  const facts = shellFacts(command, { ...where, limits: { maxLength: 0 } });
  facts.unparsed = {
    reason: "too-long",
    code: "HOOKBUS_SHELL_LIMIT",
    detail: `the call's commands are over ${MAX_CALL_SHELL_CHARS} characters in all: this one was not read`,
  };
  return facts;
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
