/**
 * Shell facts remembered by command text: agents repeat commands (`npm test`, `git status`) many
 * times in a session, and a repeat then costs a map lookup instead of a parse. Bounded: at most
 * `capacity` entries, least recently used first out, and only small commands with few facts are
 * kept, so the memo holds at most a few megabytes. Every value it returns is deeply frozen and
 * shared between callers: a caller that must change facts copies them first.
 */
import { shellFacts, type ShellFactsOptions } from "./analyse.js";
import type { ShellFacts } from "./schema.js";

export interface ShellFactsMemoOptions {
  /** Entries kept; default 512. */
  capacity?: number;
}

/** Longer commands are rare repeats and cost more memory: they are computed every time. */
const MAX_MEMO_COMMAND = 1_024;
const MAX_MEMO_FACTS = 32;
const DEFAULT_CAPACITY = 512;

function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}

/** Every option the facts depend on, in a fixed order; `\0` cannot occur in a path or limit. */
function keyOf(command: string, options: ShellFactsOptions): string {
  const { home = "", cwd = "", projectRoot = "", cwdUnknown = false, limits } = options;
  const bounds = limits === undefined ? "" : JSON.stringify(limits);
  return `${home}\0${cwd}\0${projectRoot}\0${String(cwdUnknown)}\0${bounds}\0${command}`;
}

export type MemoisedShellFacts = (
  command: string,
  options?: ShellFactsOptions,
) => Readonly<ShellFacts>;

/** A `shellFacts` with a bounded memory of recent commands (see the header). */
export function createShellFactsMemo(options: ShellFactsMemoOptions = {}): MemoisedShellFacts {
  const capacity = Math.max(1, Math.floor(options.capacity ?? DEFAULT_CAPACITY));
  const entries = new Map<string, ShellFacts>();
  return (command, factsOptions = {}) => {
    if (command.length > MAX_MEMO_COMMAND) return deepFreeze(shellFacts(command, factsOptions));
    const key = keyOf(command, factsOptions);
    const known = entries.get(key);
    if (known !== undefined) {
      // Map keeps insertion order: re-inserting makes this entry the most recently used.
      entries.delete(key);
      entries.set(key, known);
      return known;
    }
    const facts = deepFreeze(shellFacts(command, factsOptions));
    if (facts.commands.length > MAX_MEMO_FACTS) return facts;
    entries.set(key, facts);
    if (entries.size > capacity) {
      const oldest = entries.keys().next();
      if (oldest.done !== true) entries.delete(oldest.value);
    }
    return facts;
  };
}
