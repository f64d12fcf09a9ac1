/**
 * What a shell command would do, as a JSON value: the wire shape handed to workers, to Cedar and
 * to the record. Versioned, because workers in other languages read it: a field's meaning never
 * changes under one version. Derived booleans and string sets exist because Cedar has no any/all
 * over sets: a rule tests `context.shell.deletesRecursively`, not a loop over commands.
 */
import { z } from "zod";

export const SHELL_FACTS_VERSION = 1;

/** Why a command has no facts: it does not parse, or it is over a limit (docs/facts.md, "Shell"). */
export const UnparsedReasonSchema = z.enum([
  "syntax",
  "too-long",
  "too-deep",
  "too-many-commands",
  "too-many-nodes",
]);

export const UnparsedSchema = z.object({
  reason: UnparsedReasonSchema,
  code: z.enum(["HOOKBUS_SHELL_UNPARSED", "HOOKBUS_SHELL_LIMIT"]),
  /** Where the problem is, for people: the limit and the value, or the first error's offset. */
  detail: z.string(),
});

/**
 * Where a path points. `unknown`: not static (an expansion, `$(…)`, input of xargs or find).
 * `root` is `/` itself and globs directly under it (`/*`); `home` the home directory itself.
 */
export const PathClassSchema = z.enum([
  "root",
  "home",
  "inside-home",
  "system",
  "project",
  "outside",
  "unknown",
]);

export const PathFactSchema = z.object({
  /** As written after quoting is removed; `~` and `$HOME` expanded when the home is known. */
  path: z.string(),
  class: PathClassSchema,
  /** The path has glob characters (`*`, `?`, `[`), so it may name many entries. */
  glob: z.boolean(),
});

export const CommandFactSchema = z.object({
  /** Basename of the program (`/usr/bin/rm` → `rm`); `?` when it is not static (`$CMD`). */
  program: z.string(),
  /** Arguments after quoting is removed; a non-static part is kept as written. */
  argv: z.array(z.string()),
  /** Normalised: `-rvf` → r, v, f; long flags mapped for the tools that matter (`--recursive` → r). */
  flags: z.array(z.string()),
  /** Arguments that are not flags, in order. */
  operands: z.array(z.string()),
  /** Operands as paths, resolved and classified. */
  paths: z.array(PathFactSchema),
  /** The wrappers and constructs it runs inside, outermost first: `sudo`, `sh -c`, `$(…)`, `| sh`. */
  via: z.array(z.string()),
  /** The program name is not static, so what runs is unknown. */
  dynamic: z.boolean(),
  /** Its operands come from input (xargs, find -exec), so they are not in the command text. */
  operandsFromInput: z.boolean(),
});

export const RedirectFactSchema = z.object({
  /** `read` (`<`, here-strings), `write` (`>`, `>|`, `&>`), `append` (`>>`), `dup` (`2>&1`). */
  mode: z.enum(["read", "write", "append", "dup"]),
  target: PathFactSchema,
  /** The program of the command it applies to. */
  program: z.string(),
});

export const NetworkFactSchema = z.object({
  program: z.string(),
  /** Lower-case host names or IP literals the command contacts, where the text names them. */
  hosts: z.array(z.string()),
  /** It sends data out: `-d`, `--data*`, `-F`, `-T`, `--upload-file`, `git push`, piped input. */
  upload: z.boolean(),
  /** Local files it sends (`@file`, `-T file`, scp/rsync sources). */
  uploadFiles: z.array(z.string()),
});

export const InterpreterFeedSchema = z.object({
  /** The interpreter that reads its program from input (`sh`, `python3`, …). */
  interpreter: z.string(),
  /**
   * How the program arrives: `pipe` (`… | sh`), `heredoc`, `herestring`, `redirect` (`sh < f`),
   * `substitution` (`bash <(curl …)`, `source <(…)`).
   */
  from: z.enum(["pipe", "heredoc", "herestring", "redirect", "substitution"]),
  /** Decode steps before it in the pipeline: `base64`, `xxd`, `openssl`, `gzip`, … */
  decodes: z.array(z.string()),
  /** Network programs before it in the pipeline (`curl … | sh`). */
  fromNetwork: z.array(z.string()),
});

export const DeletionFactSchema = z.object({
  program: z.string(),
  recursive: z.boolean(),
  targets: z.array(PathFactSchema),
});

export const DangerousCallSchema = z.object({
  /** The interpreter whose one-liner or script holds the call: `python3`, `node`, `perl`, … */
  interpreter: z.string(),
  /** The call as a stable name: `shutil.rmtree`, `os.system`, `child_process`, `fs.rm`, … */
  call: z.string(),
});

export const ShellFactsSchema = z.object({
  version: z.literal(SHELL_FACTS_VERSION),
  unparsed: UnparsedSchema.optional(),
  commands: z.array(CommandFactSchema),
  redirects: z.array(RedirectFactSchema),
  network: z.array(NetworkFactSchema),
  interpreterFeeds: z.array(InterpreterFeedSchema),
  deletions: z.array(DeletionFactSchema),
  dangerousCalls: z.array(DangerousCallSchema),
  /** Every program that would run, by basename, once each. */
  programs: z.array(z.string()),
  /** Every host contacted, once each. */
  hosts: z.array(z.string()),
  /** Every decode step (`base64`, `xxd`, …) anywhere, once each. */
  decodes: z.array(z.string()),
  /** Every class of the deletion targets, once each (`root`, `home`, `unknown`, …). */
  deleteTargetClasses: z.array(PathClassSchema),
  /** Every wrapper or construct met (`sudo`, `sh -c`, `eval`, `$(…)`), once each. */
  wrappers: z.array(z.string()),
  deletes: z.boolean(),
  deletesRecursively: z.boolean(),
  /** A deletion names `/`, a glob right under it, the home directory, or a system directory. */
  targetsRoot: z.boolean(),
  targetsHome: z.boolean(),
  targetsSystem: z.boolean(),
  /** A deletion's targets are not all known (xargs, `$VAR`, `$(…)`). */
  deletesUnknownTarget: z.boolean(),
  pipesIntoInterpreter: z.boolean(),
  pipesDecodedIntoInterpreter: z.boolean(),
  /** Decoded input reaches a shell (`base64 -d | sh`): the issue's own example. */
  pipesDecodedIntoShell: z.boolean(),
  pipesNetworkIntoInterpreter: z.boolean(),
  usesNetwork: z.boolean(),
  uploads: z.boolean(),
  hasDangerousCall: z.boolean(),
  /** Some program name is not static (`$CMD args`), so what runs is unknown. */
  runsDynamicProgram: z.boolean(),
  /** Runs with raised privileges (`sudo`, `doas`, `su -c`, `pkexec`). */
  elevated: z.boolean(),
});

export type ShellFacts = z.infer<typeof ShellFactsSchema>;
export type CommandFact = z.infer<typeof CommandFactSchema>;
export type PathFact = z.infer<typeof PathFactSchema>;
export type PathClass = z.infer<typeof PathClassSchema>;
export type RedirectFact = z.infer<typeof RedirectFactSchema>;
export type NetworkFact = z.infer<typeof NetworkFactSchema>;
export type InterpreterFeed = z.infer<typeof InterpreterFeedSchema>;
export type DeletionFact = z.infer<typeof DeletionFactSchema>;
export type DangerousCall = z.infer<typeof DangerousCallSchema>;
export type Unparsed = z.infer<typeof UnparsedSchema>;
export type UnparsedReason = z.infer<typeof UnparsedReasonSchema>;
