/**
 * Effect facts of a call's shell commands: what they would do to the machine, its secrets and
 * the systems around it, whatever program does it. Each is one boolean of `context.facts`
 * (action-context.ts), so a Cedar rule reads a class of action ("deletes a system or credential
 * file") rather than a list of programs. The program tables are in effect-tables.ts.
 */
import { pathFacts, urlFacts } from "../facts/index.js";
import type { CommandFact, ShellFacts } from "../facts/shell/index.js";
import {
  CONTROL_PORTS,
  DESTROYS_INFRASTRUCTURE,
  DESTRUCTIVE_SQL,
  ERASES_TRACES,
  INSTALLS_PERSISTENCE,
  READS_SECRET_STORE,
  SQL_CLIENTS,
  TRACE_FILES,
  type CommandPattern,
} from "./effect-tables.js";

export const EFFECT_BOOLEANS = [
  "deletesSensitive",
  "crashesSystem",
  "readsSecretStore",
  "installsPersistence",
  "destroysInfrastructure",
  "privilegedContainer",
  "reachesInternal",
  "erasesTraces",
] as const;
export type EffectBoolean = (typeof EFFECT_BOOLEANS)[number];

export function effectFacts(
  shell: readonly ShellFacts[],
  commandTexts: readonly string[],
  cwd: string | undefined,
): Record<EffectBoolean, boolean> {
  const commands = shell.flatMap((s) => s.commands);
  const matches = (table: readonly CommandPattern[]) =>
    commands.some((c) =>
      (byProgram(table).get(c.program.toLowerCase()) ?? []).some((p) => matchesPattern(c, p)),
    );
  const destroyed = destroyedPaths(shell, commands);
  return {
    deletesSensitive: destroyed.some((p) => isSystemOrSensitive(p, cwd)),
    crashesSystem: commands.some(killsEverything) || writesKernelTrigger(shell, commands),
    readsSecretStore: matches(READS_SECRET_STORE),
    installsPersistence: matches(INSTALLS_PERSISTENCE),
    destroysInfrastructure:
      matches(DESTROYS_INFRASTRUCTURE) || shell.some((s) => runsDestructiveSql(s.commands)),
    privilegedContainer: commands.some(isPrivilegedContainer),
    reachesInternal: reachesInternal(shell, commands),
    erasesTraces:
      matches(ERASES_TRACES) ||
      [...destroyed, ...overwritten(shell)].some((p) => TRACE_FILES.test(p.path)) ||
      commandTexts.some(disablesHistory),
  };
}

/** Each table's patterns by program, built once: a command looks at its own program's rows only. */
const INDEXES = new WeakMap<readonly CommandPattern[], Map<string, CommandPattern[]>>();

function byProgram(table: readonly CommandPattern[]): Map<string, CommandPattern[]> {
  let index = INDEXES.get(table);
  if (index === undefined) {
    index = new Map();
    for (const p of table) index.set(p.program, [...(index.get(p.program) ?? []), p]);
    INDEXES.set(table, index);
  }
  return index;
}

/** The program matches and its operands hold `words` in order, or an operand or argument matches. */
export function matchesPattern(command: CommandFact, pattern: CommandPattern): boolean {
  if (command.program.toLowerCase() !== pattern.program) return false;
  const operands = command.operands.map((o) => o.toLowerCase());
  let at = 0;
  for (const word of pattern.words) {
    const found = operands.indexOf(word, at);
    if (found === -1) return false;
    at = found + 1;
  }
  if (pattern.operand !== undefined && !operands.some((o) => pattern.operand!.test(o)))
    return false;
  if (pattern.arg !== undefined && !command.argv.slice(1).some((a) => pattern.arg!.test(a)))
    return false;
  return true;
}

interface Target {
  path: string;
  class: string;
}

/** Programs that destroy the files they are given, recursive or not. */
const DESTROYERS: ReadonlySet<string> = new Set([
  "rm",
  "unlink",
  "shred",
  "srm",
  "wipe",
  "truncate",
]);

/**
 * What the commands delete, shred, truncate or overwrite wholesale (`dd of=`). A `>` redirect is
 * a write, which the approval rules for sensitive writes hold instead (overwritten below).
 */
function destroyedPaths(shell: readonly ShellFacts[], commands: readonly CommandFact[]): Target[] {
  const targets: Target[] = shell.flatMap((s) => s.deletions.flatMap((d) => d.targets));
  for (const c of commands) {
    if (DESTROYERS.has(c.program)) targets.push(...c.paths);
    // `mv ~ /dev/null`, `mv /etc /tmp/x`: what is moved away is gone from where it was.
    if (c.program === "mv" && c.paths.length > 1) targets.push(...c.paths.slice(0, -1));
    if (c.program === "dd")
      for (const arg of c.argv)
        if (arg.startsWith("of=")) targets.push({ path: arg.slice(3), class: "unknown" });
    // `ln -sf /dev/null ~/.bash_history`: the file is replaced by a link to nothing.
    if (c.program === "ln" && c.argv.includes("/dev/null")) targets.push(...c.paths);
  }
  return targets;
}

/** `> file`: emptied and rewritten (`> ~/.bash_history` erases it). */
function overwritten(shell: readonly ShellFacts[]): Target[] {
  return shell.flatMap((s) => s.redirects.filter((r) => r.mode === "write").map((r) => r.target));
}

/** `/`, the home directory, a system directory or file, or a labelled place (credentials, start-up files, …). */
function isSystemOrSensitive(target: Target, cwd: string | undefined): boolean {
  if (target.class === "root" || target.class === "home" || target.class === "system") {
    // `> /dev/null` and the like are where output goes, not a system file destroyed.
    return !/^\/dev\/(null|zero|stdout|stderr|tty|fd\/\d+)$/.test(target.path);
  }
  const facts = pathFacts(target.path, cwd === undefined ? {} : { cwd });
  return facts.sensitive.length > 0 && !facts.sensitive.every((l) => l === "git-hooks");
}

/** `kill -9 -1` (every process), `kill 1` (init), killall5. */
function killsEverything(command: CommandFact): boolean {
  if (command.program === "killall5") return true;
  if (command.program !== "kill") return false;
  const args = command.argv.slice(1);
  const pids = args.slice(args.length > 1 && args[0]!.startsWith("-") ? 1 : 0);
  const afterSignal = args[0] === "-s" || args[0] === "-n" ? args.slice(2) : pids;
  return afterSignal.some((a) => a === "-1" || a === "1");
}

/** Kernel triggers: the magic SysRq key (`echo c > /proc/sysrq-trigger` crashes), raw memory. */
const KERNEL_TRIGGERS = /^\/(proc\/sysrq-trigger|dev\/(mem|kmem|port))$/;

function writesKernelTrigger(shell: readonly ShellFacts[], commands: readonly CommandFact[]) {
  const redirected = shell.some((s) =>
    s.redirects.some(
      (r) => (r.mode === "write" || r.mode === "append") && KERNEL_TRIGGERS.test(r.target.path),
    ),
  );
  const teed = commands.some(
    (c) =>
      ["tee", "dd", "cp"].includes(c.program) &&
      c.argv.some((a) => KERNEL_TRIGGERS.test(a.replace(/^of=/, ""))),
  );
  return redirected || teed;
}

/**
 * A SQL client given destructive SQL in its arguments or by another command of the same command
 * line (`echo 'DROP …' | psql`). Per command line, so a call's facts stay the OR of its commands'.
 */
function runsDestructiveSql(commands: readonly CommandFact[]): boolean {
  if (!commands.some((c) => SQL_CLIENTS.has(c.program))) return false;
  return commands.some((c) => c.argv.some((a) => DESTRUCTIVE_SQL.test(a)));
}

const CONTAINER_ENGINES: ReadonlySet<string> = new Set(["docker", "podman", "nerdctl"]);
const PRIVILEGED_FLAG =
  /^--(privileged|(pid|ipc|uts|userns|cgroupns)(=|$)host|cap-add(=|$)|security-opt(=|$)|device(=|$))/i;

/**
 * A container given the host: `--privileged`, host namespaces, added capabilities, unconfined
 * security options, devices, or a mount of `/`, the home, a system directory or a runtime socket.
 * `nsenter -t 1` enters the host's namespaces directly.
 */
function isPrivilegedContainer(command: CommandFact): boolean {
  if (command.program === "nsenter") return true;
  if (!CONTAINER_ENGINES.has(command.program)) return false;
  const args = command.argv.slice(1);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (PRIVILEGED_FLAG.test(arg)) return true;
    if (/^--(pid|ipc|uts|userns)$/.test(arg) && args[i + 1] === "host") return true;
    const source = mountSource(arg, args[i + 1]);
    if (source !== undefined && isHostPlace(source)) return true;
  }
  return false;
}

/** The host side of `-v src:dst`, `--volume=src:dst`, `--mount type=bind,source=src,…`. */
function mountSource(arg: string, next: string | undefined): string | undefined {
  let spec: string | undefined;
  if (arg === "-v" || arg === "--volume" || arg === "--mount") spec = next;
  else if (/^--(volume|mount)=/.test(arg)) spec = arg.slice(arg.indexOf("=") + 1);
  else if (/^-[a-zA-Z]*v$/.test(arg))
    spec = next; // `-itv /:/h`
  else if (/^-v./.test(arg)) spec = arg.slice(2).replace(/^=/, "");
  if (spec === undefined) return undefined;
  const bind = /(?:^|,)(?:source|src)=([^,]+)/.exec(spec);
  if (bind !== null) return bind[1];
  return spec.split(":")[0];
}

const HOST_PLACES =
  /^\/(home|root|users|etc|usr|bin|sbin|boot|lib|lib64|dev|proc|sys|var|run)(\/|$)/i;

function isHostPlace(source: string): boolean {
  const facts = pathFacts(source);
  const path = facts.normalized;
  return (
    facts.sensitive.length > 0 ||
    path === "/" ||
    path === "/~" ||
    path.startsWith("/~/") ||
    /\.sock$/.test(path) ||
    (HOST_PLACES.test(path) && !/^\/(home|users)\/[^/]+\/.+/i.test(path))
  );
}

/**
 * A network command that reaches a private address or name (10/8, 192.168/16, `.internal`, a
 * single label such as `db`), a loopback port of a control plane (CONTROL_PORTS), or a local
 * socket (`curl --unix-socket`, `nc -U`, `socat UNIX-CONNECT:`). Loopback on other ports is a
 * developer's own server (`curl localhost:3000`) and passes.
 */
function reachesInternal(shell: readonly ShellFacts[], commands: readonly CommandFact[]): boolean {
  for (const s of shell)
    for (const net of s.network) {
      // Every command of that program: two `curl`s in one line each have their own ports.
      const mine = commands.filter((c) => c.program === net.program);
      if (mine.some(usesLocalSocket)) return true;
      for (const host of net.hosts) {
        if (host === "" || /[$`(){}\s]/.test(host)) continue;
        const url = urlFacts(`http://${host.includes(":") ? `[${host}]` : host}/`);
        const ranges = url.ranges.filter((r) => r !== "loopback");
        if (ranges.some((r) => r !== "documentation" && r !== "multicast")) return true;
        if (
          url.ranges.includes("loopback") &&
          mine.some((c) => portsOf(c, host).some((p) => CONTROL_PORTS.has(p)))
        )
          return true;
      }
    }
  return false;
}

function usesLocalSocket(command: CommandFact): boolean {
  const args = command.argv.slice(1);
  return args.some(
    (a) =>
      /^--(abstract-)?unix-socket(=|$)/.test(a) ||
      /^(unix-(connect|client)|abstract-connect):/i.test(a) ||
      (["nc", "ncat", "netcat"].includes(command.program) && /^-[a-zA-Z]*U/.test(a)),
  );
}

/** Ports written after the host (`host:8500`, `nc host 8500`). */
function portsOf(command: CommandFact, host: string): number[] {
  const ports: number[] = [];
  const escaped = host.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const after = new RegExp(`${escaped}\\]?:(\\d{1,5})`, "i");
  command.operands.forEach((operand, i) => {
    const m = after.exec(operand);
    if (m !== null) ports.push(Number(m[1]));
    if (operand.toLowerCase() === host && /^\d{1,5}$/.test(command.operands[i + 1] ?? ""))
      ports.push(Number(command.operands[i + 1]));
  });
  return ports;
}

/**
 * `unset HISTFILE`, `export HISTFILE=/dev/null`, `HISTSIZE=0`: the parser keeps no command for
 * a declaration or an assignment, so the command text is read for them.
 */
function disablesHistory(text: string): boolean {
  return /(^|[\s;&|('"])(unset\s+(-v\s+)?HIST(FILE|SIZE|FILESIZE)\b|(export\s+|declare\s+(-x\s+)?)?HIST(FILE|SIZE|FILESIZE)=)/.test(
    text,
  );
}
