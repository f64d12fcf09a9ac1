/**
 * The Cedar view of a tool call's facts (issue 30, item 6): one record, `context.facts`, that a
 * rule reads without any/all over sets (Cedar has neither). The shell facts of every command the
 * call holds are merged (booleans OR-ed, sets unioned), so `context.facts.deletesRecursively`
 * is true when any command would delete recursively, whichever of the call's commands it is and
 * however it is spelt. A few flags are derived here from the per-command facts (a disk wipe by
 * program name, a power-off, a force push, a fork bomb) because rules need them and a record of
 * sets cannot say them. docs/cedar.md, "context.facts", lists every field.
 *
 * The shell parser is loaded when this module is first imported (a top-level await): every
 * evaluator of a Cedar set (the coordinator, replay, `policy test`) imports it, so `shellFacts`
 * is synchronous on the decision path. If the parser cannot load, every command is `unparsed`,
 * which the library holds for a person: a missing parser never lets a command pass unread.
 */
import {
  computeActionFacts,
  pathFacts,
  SENSITIVE_LABELS,
  urlFacts,
  type ActionFacts,
  type PathFact as ParamPathFact,
  type ToolCallFacts,
} from "../facts/index.js";
import {
  loadShellParser,
  shellFacts,
  shellParserLoaded,
  type CommandFact,
  type ShellFacts,
} from "../facts/shell/index.js";
import { findPathFacts } from "../facts/path.js";
import type { ToolVocabulary } from "../vocabulary/vocabulary.js";
import { ERASES_DEVICE } from "./effect-tables.js";
import { EFFECT_BOOLEANS, effectFacts, matchesPattern } from "./shell-effects.js";
import type { CedarValueJson } from "./wasm.js";

// Never throws at import: without a parser the facts say `unparsed` (see above).
await loadShellParser().catch(() => undefined);

/** The shell facts' booleans, OR-ed over the call's commands (src/facts/shell/schema.ts). */
export const SHELL_BOOLEANS = [
  "deletes",
  "deletesRecursively",
  "targetsRoot",
  "targetsHome",
  "targetsSystem",
  "deletesUnknownTarget",
  "pipesIntoInterpreter",
  "pipesDecodedIntoInterpreter",
  "pipesDecodedIntoShell",
  "pipesNetworkIntoInterpreter",
  "usesNetwork",
  "uploads",
  "hasDangerousCall",
  "runsDynamicProgram",
  "elevated",
] as const satisfies readonly (keyof ShellFacts)[];

/** The shell facts' string sets, unioned over the call's commands. */
export const SHELL_SETS = [
  "programs",
  "hosts",
  "decodes",
  "deleteTargetClasses",
  "wrappers",
] as const satisfies readonly (keyof ShellFacts)[];

/** Flags derived here from the per-command facts (each is a function below). */
export const DERIVED_BOOLEANS = [
  "wipesDisk",
  "powersOff",
  "forkBomb",
  "forcePush",
  "discardsWork",
  "chmodsSystem",
  "editsCrontab",
  "toolDeletesSystemPath",
  ...EFFECT_BOOLEANS,
] as const;

/** The Cedar schema of `context.facts` (schema.ts declares it as type `Facts`). */
export function factsSchemaTypes(): Record<string, readonly string[]> {
  return {
    Facts: [
      "class: String",
      "unparsed: Bool",
      "unparsedReasons: Set<String>",
      "commandCount: Long",
      ...SHELL_BOOLEANS.map((b) => `${b}: Bool`),
      ...SHELL_SETS.map((s) => `${s}: Set<String>`),
      "dangerousCalls: Set<String>",
      "interpreters: Set<String>",
      "uploadFiles: Set<String>",
      ...DERIVED_BOOLEANS.map((b) => `${b}: Bool`),
      "url: UrlFacts",
      "path: PathFacts",
      "recipients: RecipientFacts",
      "secrets: Set<String>",
    ],
    UrlFacts: [
      "count: Long",
      "hosts: Set<String>",
      "internal: Bool",
      "metadata: Bool",
      "userinfo: Bool",
      "unparsed: Bool",
      "maxQuerySize: Long",
    ],
    PathFacts: [
      "sensitive: Set<String>",
      "credential: Bool",
      "persistence: Bool",
      "outsideProject: Bool",
      "writtenSensitive: Set<String>",
      "writesCredential: Bool",
      "writesPersistence: Bool",
    ],
    RecipientFacts: [
      "count: Long",
      "domains: Set<String>",
      "externalDomains: Set<String>",
      "allInternal: Bool",
      "anyExternal: Bool",
      "undomained: Bool",
      "truncated: Bool",
    ],
  };
}

/** Attributes of `context.facts` whose values are a closed list (lint.ts refuses others). */
export const FACT_VALUE_LISTS: Readonly<Record<string, readonly string[]>> = {
  deleteTargetClasses: ["root", "home", "inside-home", "system", "project", "outside", "unknown"],
  sensitive: SENSITIVE_LABELS,
  writtenSensitive: SENSITIVE_LABELS,
};

export interface FactsOptions {
  vocabulary?: ToolVocabulary | undefined;
}

type Shell = ShellFacts | null;

/** The call's facts, with every shell command parsed (null: the parser failed on it). */
export function computeCallFacts(
  hook: string,
  event: Readonly<Record<string, unknown>>,
  options: FactsOptions = {},
): ActionFacts<Shell> {
  const parse = shellParserLoaded() ? safeShellFacts : undefined;
  return computeActionFacts<Shell>(hook, event, {
    ...(options.vocabulary === undefined ? {} : { vocabulary: options.vocabulary }),
    ...(parse === undefined ? {} : { shellFacts: parse }),
  });
}

function safeShellFacts(command: string, options: { cwd?: string }): Shell {
  try {
    return shellFacts(command, options);
  } catch {
    return null; // the parser broke: `unparsed`, never harmless
  }
}

/** The `context.facts` record of one tool call. */
export function cedarFacts(
  tool: ToolCallFacts<Shell>,
  extraReasons: readonly string[] = [],
): CedarValueJson {
  const shell = shellOf(tool);
  shell.reasons.push(...extraReasons);
  const commands = shell.parsed.flatMap((s) => s.commands);
  const written = writtenPaths(tool, shell.parsed);
  const paths = [...tool.paths, ...shellPaths(shell.parsed, tool.cwd)];
  const facts: Record<string, CedarValueJson> = {
    class: tool.class,
    unparsed: shell.reasons.length > 0 || tool.unparsed.length > 0,
    unparsedReasons: [...new Set([...shell.reasons, ...tool.unparsed.map((r) => `shape-${r}`)])],
    commandCount: tool.commands.length,
  };
  for (const name of SHELL_BOOLEANS) facts[name] = shell.parsed.some((s) => s[name]);
  for (const name of SHELL_SETS) facts[name] = union(shell.parsed.map((s) => s[name]));
  facts.dangerousCalls = union(shell.parsed.map((s) => s.dangerousCalls.map((d) => d.call)));
  facts.interpreters = union(shell.parsed.map((s) => s.interpreterFeeds.map((f) => f.interpreter)));
  facts.uploadFiles = union(shell.parsed.map((s) => s.network.flatMap((n) => n.uploadFiles)));
  facts.wipesDisk = wipesDisk(commands, shell.parsed);
  facts.powersOff = commands.some(powersOff);
  facts.forkBomb = commands.some(isForkBomb);
  facts.forcePush = commands.some(isForcePush);
  facts.discardsWork = commands.some(discardsWork);
  facts.chmodsSystem = commands.some(chmodsSystem);
  facts.editsCrontab = commands.some(editsCrontab);
  facts.toolDeletesSystemPath = toolDeletesSystemPath(tool);
  Object.assign(
    facts,
    effectFacts(
      shell.parsed,
      tool.commands.map((c) => c.text),
      tool.cwd,
    ),
  );
  facts.url = urlRecord(tool, shell.parsed);
  facts.path = pathRecord(paths, written);
  facts.recipients = recipientRecord(tool);
  facts.secrets = tool.summary.secretKinds;
  return facts;
}

/** The parsed commands, and why any was not (a syntax error, a limit, no parser). */
function shellOf(tool: ToolCallFacts<Shell>): { parsed: ShellFacts[]; reasons: string[] } {
  if (tool.commands.length === 0) return { parsed: [], reasons: [] };
  if (tool.shell === undefined) return { parsed: [], reasons: ["no-parser"] };
  const parsed: ShellFacts[] = [];
  const reasons: string[] = [];
  for (const facts of tool.shell) {
    if (facts === null) reasons.push("parser-error");
    else {
      parsed.push(facts);
      if (facts.unparsed !== undefined) reasons.push(facts.unparsed.reason);
    }
  }
  return { parsed, reasons };
}

function union(sets: readonly (readonly string[])[]): string[] {
  return [...new Set(sets.flat())];
}

/** The call's URLs and the hosts its shell commands contact, as one summary. */
function urlRecord(tool: ToolCallFacts<Shell>, shell: readonly ShellFacts[]): CedarValueJson {
  const s = tool.summary;
  // A shell host is read as a URL's host, so `curl http://169.254.169.254/` is a metadata URL.
  const hosts = union(shell.map((f) => f.hosts));
  const hostFacts = hosts.filter(isStaticHost).map((h) => urlFacts(`http://${hostPart(h)}/`));
  return {
    count: tool.urls.length,
    hosts: union([s.hosts, hosts]),
    internal: s.internalUrl || hostFacts.some((u) => u.internal),
    metadata: s.metadataUrl || hostFacts.some((u) => u.metadata),
    userinfo: s.userinfoUrl,
    unparsed: s.unparsedUrl,
    maxQuerySize: Math.max(0, ...tool.urls.map((u) => u.querySize ?? 0)),
  };
}

/** `$HOST`, `$(…)`: not a host the text names (the upload rule treats it as not allowed). */
function isStaticHost(host: string): boolean {
  return host !== "" && !/[$`(){}\s]/.test(host);
}

/** An IPv6 literal in brackets, so `http://[::1]/` parses. */
function hostPart(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Programs that only test a file's name or kind (`[ -f .env ]`): they read no content. */
const NAMES_ONLY: ReadonlySet<string> = new Set(["test", "[", "[["]);

/** Shell operands and redirect targets as path facts, so `cat ~/.ssh/id_rsa` names a credential. */
function shellPaths(shell: readonly ShellFacts[], cwd: string | undefined): ParamPathFact[] {
  const options = cwd === undefined ? {} : { cwd };
  const texts = shell.flatMap((s) => [
    ...s.commands
      .filter((c) => !NAMES_ONLY.has(c.program))
      .flatMap((c) => c.paths.map((p) => p.path)),
    ...s.redirects.map((r) => r.target.path),
    ...s.network.flatMap((n) => n.uploadFiles),
  ]);
  const found = shell.flatMap((s) => findListings(s.commands, options));
  return [...[...new Set(texts)].map((text) => pathFacts(text, options)), ...found];
}

/**
 * `find ROOT -name PATTERN` whose files are handed on (`-exec cat {}`, `| xargs cat`): the files
 * it could list, so `find ~ -name 'id_*' -exec cat {} \;` names the SSH keys. A listing alone
 * (no `-exec`, no `xargs`, not inside `$(…)` or `<(…)`) names no file's content.
 */
function findListings(commands: readonly CommandFact[], options: { cwd?: string }) {
  const handedOn = commands.some((c) => c.operandsFromInput);
  return commands
    .filter((c) => c.program === "find")
    .filter(
      (c) =>
        handedOn ||
        c.via.some((v) => v.startsWith("$(") || v.startsWith("`") || v.startsWith("<(")) ||
        c.argv.some((a) => /^-(exec|execdir|ok|okdir)$/.test(a)),
    )
    .flatMap((c) => {
      const roots = c.paths.length > 0 ? c.paths.map((p) => p.path) : ["."];
      const patterns = c.argv.flatMap((a, i) =>
        /^-i?name$/.test(a) && c.argv[i + 1] !== undefined ? [c.argv[i + 1]!] : [],
      );
      return roots.flatMap((root) => patterns.map((p) => findPathFacts(root, p, options)));
    });
}

/** What the call writes: a file-write tool's paths, a shell's `>`/`>>` targets and `tee` files. */
function writtenPaths(tool: ToolCallFacts<Shell>, shell: readonly ShellFacts[]): ParamPathFact[] {
  const options = tool.cwd === undefined ? {} : { cwd: tool.cwd };
  const texts = shell.flatMap((s) => [
    ...s.redirects
      .filter((r) => r.mode === "write" || r.mode === "append")
      .map((r) => r.target.path),
    ...s.commands.filter((c) => WRITERS.has(c.program)).flatMap((c) => c.paths.map((p) => p.path)),
  ]);
  const own = tool.class === "file-write" ? tool.paths : [];
  const shellWritten = [...new Set(texts)].filter((text) => !OUTPUT_SINKS.test(text));
  return [...own, ...shellWritten.map((text) => pathFacts(text, options))];
}

/** Where output is thrown away or shown (`> /dev/null`, `2> /dev/stderr`): no file changes. */
const OUTPUT_SINKS = /^\/dev\/(null|stdout|stderr|tty|fd\/[0-2])$/;

/** Programs whose path operands are (or may be) written. */
const WRITERS: ReadonlySet<string> = new Set([
  "tee",
  "cp",
  "mv",
  "install",
  "ln",
  "sed",
  "truncate",
]);

function pathRecord(paths: readonly ParamPathFact[], written: readonly ParamPathFact[]) {
  return {
    sensitive: labels(paths),
    credential: paths.some((p) => p.credentials),
    persistence: paths.some((p) => p.persistence),
    outsideProject: paths.some((p) => p.insideProject === false),
    writtenSensitive: labels(written),
    writesCredential: written.some((p) => p.credentials),
    writesPersistence: written.some((p) => p.persistence),
  };
}

function labels(paths: readonly ParamPathFact[]): string[] {
  const found = new Set(paths.flatMap((p) => p.sensitive));
  return SENSITIVE_LABELS.filter((label) => found.has(label));
}

function recipientRecord(tool: ToolCallFacts<Shell>): CedarValueJson {
  const r = tool.recipients;
  return {
    count: r.recipients.length,
    domains: r.domains,
    externalDomains: r.externalDomains,
    allInternal: r.allInternal,
    anyExternal: r.anyExternal,
    undomained: r.recipients.some((x) => x.domainAscii === undefined),
    truncated: r.truncated,
  };
}

/** Block devices by name: disks, partitions, device-mapper volumes. */
const BLOCK_DEVICE = /^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk|mapper\/|md|dm-|loop)/;
/** Programs that erase or repartition what they are given. */
const DISK_PROGRAMS: ReadonlySet<string> = new Set([
  "wipefs",
  "blkdiscard",
  "shred",
  "fdisk",
  "sfdisk",
  "cfdisk",
  "sgdisk",
  "gdisk",
  "parted",
  "mkswap",
  "dd",
]);

/** A filesystem made (`mkfs`, `mkfs.ext4`), or a block device erased, repartitioned or written. */
function wipesDisk(commands: readonly CommandFact[], shell: readonly ShellFacts[]): boolean {
  if (commands.some((c) => c.program === "mkfs" || c.program.startsWith("mkfs."))) return true;
  if (commands.some((c) => c.program === "wipefs" || c.program === "blkdiscard")) return true;
  if (commands.some((c) => ERASES_DEVICE.some((p) => matchesPattern(c, p)))) return true;
  const toDevice = shell.some((s) =>
    s.redirects.some(
      (r) => r.mode !== "read" && r.mode !== "dup" && BLOCK_DEVICE.test(r.target.path),
    ),
  );
  return toDevice || commands.some((c) => DISK_PROGRAMS.has(c.program) && namesDevice(c));
}

/** A device operand (`/dev/sda`, `of=/dev/sda`), unless it only lists (`fdisk -l`, `parted -l`). */
function namesDevice(command: CommandFact): boolean {
  if (command.flags.includes("l") || command.argv.includes("--list")) return false;
  return command.argv.slice(1).some((arg) => BLOCK_DEVICE.test(arg.replace(/^of=/, "")));
}

const POWER_PROGRAMS: ReadonlySet<string> = new Set(["shutdown", "reboot", "halt", "poweroff"]);
const POWER_VERBS: ReadonlySet<string> = new Set(["reboot", "poweroff", "halt", "kexec"]);

/** The machine stopped or restarted: by program name, so `grep reboot log` is not. */
function powersOff(command: CommandFact): boolean {
  if (POWER_PROGRAMS.has(command.program)) return true;
  const first = command.operands[0];
  if (command.program === "systemctl" || command.program === "loginctl")
    return first !== undefined && POWER_VERBS.has(first);
  if (command.program === "init" || command.program === "telinit")
    return first === "0" || first === "6";
  return false;
}

/** A function that runs itself (`:(){ :|:& };:`): the parser reports the call inside its body. */
function isForkBomb(command: CommandFact): boolean {
  return command.via.includes(`function ${command.program}`);
}

function gitSubcommand(command: CommandFact): string | undefined {
  return command.program === "git" ? command.operands[0] : undefined;
}

/** `git push --force`, `-f`, `--force-with-lease`, `--mirror`, `--delete` or a `+ref`. */
function isForcePush(command: CommandFact): boolean {
  if (gitSubcommand(command) !== "push") return false;
  const args = command.argv.slice(1);
  return (
    args.some((a) => /^--(force|force-with-lease|mirror|delete)(=|$)/.test(a)) ||
    args.some((a) => /^-[a-zA-Z]*[fd]/.test(a) && !a.startsWith("--")) ||
    command.operands.slice(1).some((o) => o.startsWith("+") || o.startsWith(":"))
  );
}

/** `git reset --hard`, `git clean -f`, `git checkout -f`/`--force`: uncommitted work lost. */
function discardsWork(command: CommandFact): boolean {
  const sub = gitSubcommand(command);
  const args = command.argv.slice(1);
  if (sub === "reset") return args.includes("--hard");
  if (sub === "clean") return args.some((a) => a === "--force" || /^-[a-zA-Z]*f/.test(a));
  return false;
}

/**
 * A word of a tool's name that says it destroys what it is given: a whole word (`rm`, `drop`,
 * `format`), or a verb anywhere in a word, so `deletedirectory` and `forceRemove` count too.
 */
const DESTROY_WORDS =
  /^(rm|rmdir|rmtree|drop|format)$|delete|remove|destroy|wipe|purge|erase|unlink|shred|truncate/;

/**
 * A tool (MCP or any other) whose name says it deletes, given `/`, a home directory, or a system
 * or credential place: `mcp__files__delete_directory {path: "/"}`. Any tool class: a file tool
 * that deletes is not a shell, and no shell fact sees it.
 */
function toolDeletesSystemPath(tool: ToolCallFacts<Shell>): boolean {
  const name = [tool.name, tool.mcp?.tool ?? ""].join(" ");
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  if (!words.some((w) => DESTROY_WORDS.test(w))) return false;
  // `target` is read as a recipient (a message's); for a deleting tool, a path-like one is a path.
  const targets = tool.recipients.recipients
    .map((r) => r.text)
    .filter((text) => /^([/~.]|\$\{?HOME)/.test(text))
    .map((text) => pathFacts(text));
  return [...tool.paths, ...targets].some(
    (p) =>
      p.normalized === "/" ||
      p.normalized === "/~" ||
      /^\/(home|users|root)(\/[^/]+)?$/i.test(p.normalized) ||
      p.sensitive.length > 0,
  );
}

/** `chmod`/`chown`/`chgrp` -R on `/`, the home directory or a system directory. */
function chmodsSystem(command: CommandFact): boolean {
  if (!["chmod", "chown", "chgrp"].includes(command.program)) return false;
  // Flags are normalised to lower case for the tools that matter (`-R` → r).
  const recursive = command.flags.some((f) => f === "r" || f === "R");
  return recursive && command.paths.some((p) => ["root", "home", "system"].includes(p.class));
}

/** `crontab file`, `crontab -` or `crontab -e`: a schedule installed; `crontab -l` only lists. */
function editsCrontab(command: CommandFact): boolean {
  if (command.program !== "crontab") return false;
  return !command.flags.includes("l") || command.operands.length > 0;
}
