/**
 * The processes a stdio gateway lives for. An MCP host that starts `npx hookbus mcp-proxy`
 * gets npm's process, which runs the gateway through a shell: host → npx → sh → gateway. Killed
 * with -9, npx leaves the shell waiting on the gateway, so the gateway's parent never changes,
 * and a third process holding the same stdin keeps it from ending. So the gateway watches its
 * parent and every wrapper above it (shells, npm/npx and their kin) up to the first process that
 * is none of these, the one that started the command, and ends when any of them is gone.
 *
 * Linux reads /proc (a pid is told apart from its reuse by its start time, and a zombie counts
 * as gone); other Unixes ask `ps` once at start and probe with signal 0; elsewhere only the
 * parent is watched (the caller's ppid check).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename } from "node:path";

export interface WatchedProcess {
  pid: number;
  /** What it runs, for the log line that says why the gateway stopped. */
  name: string;
  /** Linux: its start time in clock ticks since boot (a reused pid has another one). */
  startedAt?: string;
}

interface ProcessInfo extends WatchedProcess {
  ppid: number;
  /** Its command line (argv joined by spaces; may be empty when it is not readable). */
  command: string;
  zombie: boolean;
}

/** How far up the wrappers go: npx → sh → … is two or three levels, never eight. */
const MAX_DEPTH = 8;

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish"]);
/** Package runners that start a command for someone else and do not end with it on -9. */
const RUNNERS = new Set(["npx", "npm", "pnpm", "pnpx", "yarn", "bunx", "corepack"]);

/** `npx-cli.js` → `npx`, `/usr/bin/pnpm` → `pnpm`, `-bash` (a login shell) → `bash`. */
function programOf(path: string): string {
  return basename(path)
    .replace(/^-/, "")
    .replace(/(-cli)?\.[cm]?js$/, "");
}

function procInfo(pid: number): ProcessInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // comm is in parentheses and may hold spaces or parentheses itself: split after the last ")".
  const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  let command = "";
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    // Not readable (another user's process): the name alone decides.
  }
  return {
    pid,
    name,
    ppid: Number(fields[1]),
    command,
    zombie: fields[0] === "Z" || fields[0] === "X",
    ...(fields[19] === undefined ? {} : { startedAt: fields[19] }),
  };
}

function psInfo(pid: number): ProcessInfo | undefined {
  try {
    const line = execFileSync("ps", ["-o", "ppid=", "-o", "args=", "-p", String(pid)], {
      encoding: "utf8",
      timeout: 2_000,
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const match = /^(\d+)\s+(.*)$/.exec(line);
    if (match === null) return undefined;
    const command = match[2]!;
    const name = basename(command.split(" ")[0] ?? "");
    return { pid, name, ppid: Number(match[1]), command, zombie: false };
  } catch {
    return undefined;
  }
}

const onLinux = process.platform === "linux";
const info = (pid: number) => (onLinux ? procInfo(pid) : psInfo(pid));

/**
 * A shell, or npm and its kin: something that runs the command for the process above it. Only
 * the program and its script count (`node …/npx-cli.js`), never later arguments: a host whose
 * arguments name npx is still the host.
 */
function isWrapper(p: ProcessInfo): boolean {
  const [program, script] = p.command.split(" ").map(programOf);
  const names = [programOf(p.name), program, script];
  return names.some((n) => n !== undefined && (SHELLS.has(n) || RUNNERS.has(n)));
}

/**
 * The parent and each wrapper above it, up to and including the first process that is not a
 * wrapper. Never pid 1 (init, or a container's entry point: being re-parented to it is what a
 * parent's death looks like). Empty where processes cannot be read (Windows).
 */
export function launcherChain(fromPid: number = process.ppid): WatchedProcess[] {
  if (process.platform === "win32") return [];
  const chain: WatchedProcess[] = [];
  let pid = fromPid;
  for (let depth = 0; depth < MAX_DEPTH && pid > 1; depth++) {
    const p = info(pid);
    if (p === undefined || p.zombie) break;
    chain.push({
      pid: p.pid,
      name: p.name,
      ...(p.startedAt === undefined ? {} : { startedAt: p.startedAt }),
    });
    if (!isWrapper(p)) break;
    pid = p.ppid;
  }
  return chain;
}

/** Whether a watched process is still the one that was there at start. */
export function stillRunning(watched: WatchedProcess): boolean {
  if (onLinux) {
    const now = procInfo(watched.pid);
    return now !== undefined && !now.zombie && now.startedAt === watched.startedAt;
  }
  try {
    process.kill(watched.pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface Launchers {
  /** The parent when they were read: another parent since means it exited. */
  parent: number;
  chain: WatchedProcess[];
}

/** Read them once, as early as possible (a launcher already gone is not seen). */
export function readLaunchers(): Launchers {
  const parent = process.ppid;
  return { parent, chain: launcherChain(parent) };
}
