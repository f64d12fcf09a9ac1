/** What the steps of one analysis share: the facts so far, the limits, and the way down. */
import type { FactsAccumulator } from "./accumulator.js";
import type { ShellLimits } from "./limits.js";
import type { PathContext } from "./paths.js";
import type { PathFact } from "./schema.js";

export interface Analysis {
  acc: FactsAccumulator;
  limits: ShellLimits;
  /** Where paths resolve: changed by a `cd` in the command, for the commands after it. */
  paths: PathContext;
  vars: ReadonlyMap<string, string>;
  /** Analyses a nested script one level deeper (sh -c, eval, a decoded pipe, system("…")). */
  script(text: string, via: string[], nesting: number): void;
}

/** What a collected command turned out to run, once its wrappers are unwrapped. */
export interface Final {
  program: string;
  args: string[];
  /** An interpreter that reads its program from its input. */
  readsInput: boolean;
  /** A network program (its output may be downloaded code). */
  network: boolean;
  /** The deletion whose operands come from input (`xargs rm`), by index in the facts. */
  inputDeletion?: number;
  /** The paths it prints, one per line, when the text says (`ls /`, `find ~`, `echo a b`). */
  prints?: PathFact[];
}
