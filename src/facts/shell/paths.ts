/**
 * Operands as paths: `~`, `$HOME` and relative paths resolved when the home and the working
 * directory are known, then classified. `rm -rf /`, `rm -rf /*`, `rm -rf ~` and `rm -rf $HOME/`
 * name the same kinds of place however they are spelt.
 */
import { posix } from "node:path";
import { NO_PROJECT, projectRootOf } from "../project-root.js";
import type { PathClass, PathFact } from "./schema.js";

export interface PathContext {
  home?: string;
  cwd?: string;
  /**
   * The project's root; defaults to the working directory the command starts in. A root that
   * cannot be a project's (`/`, a home, a system directory: src/facts/project-root.ts) is none.
   */
  projectRoot?: string;
  /** A `cd` earlier in the command went somewhere not static: relative paths are unknown. */
  cwdUnknown?: boolean;
}

const SYSTEM_DIRS = [
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/home",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/media",
  "/mnt",
  "/opt",
  "/proc",
  "/root",
  "/run",
  "/sbin",
  "/snap",
  "/srv",
  "/sys",
  "/usr",
  "/var",
  "/Applications",
  "/Library",
  "/System",
  "/Users",
  "/private",
];

const GLOB = /[*?[]/u;
const HOME_PREFIX = /^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/u;

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/** The part of a path before its first glob segment: `/*` → `/`, `~/a/*.txt` → `~/a`. */
function globBase(path: string): string {
  const segments = path.split("/");
  const at = segments.findIndex((s) => GLOB.test(s));
  if (at === -1) return path;
  const base = segments.slice(0, at).join("/");
  return base === "" && path.startsWith("/") ? "/" : base || ".";
}

/**
 * The home directory when nobody said where it is: an absolute place no real path names, so
 * `..` out of it is seen climbing out (`~/..` with the home unknown is the parent of some home,
 * never `.`, which normalising `~/..` as a relative path made it: the project). Shown as `~`.
 */
const UNKNOWN_HOME = "/\0home";

function resolve(text: string, ctx: PathContext): string {
  const home = ctx.home ?? UNKNOWN_HOME;
  // `~user` is another user's home: under /home (a system directory), or /root.
  const expanded = text
    .replace(HOME_PREFIX, home)
    .replace(/^~([A-Za-z_][\w.-]*)(?=\/|$)/u, (_m, user: string) =>
      user === "root" ? "/root" : `/home/${user}`,
    );
  if (expanded.startsWith("/")) return posix.normalize(expanded);
  if (expanded.startsWith("~")) return posix.normalize(expanded);
  if (ctx.cwd === undefined) return posix.normalize(expanded);
  // After `cd sub` with no known start, the working directory is relative, or `~…`.
  return ctx.cwd.startsWith("/")
    ? posix.resolve(ctx.cwd, expanded)
    : posix.normalize(posix.join(ctx.cwd, expanded));
}

function classify(path: string, ctx: PathContext, home: string): PathClass {
  const base = globBase(path).replace(/(.)\/+$/u, "$1");
  if (base === "/") return "root";
  // Climbing out of a directory nobody named (the start, or `cd sub` from it) can reach
  // anything, `/` included: `cd sub && rm -rf ../../..` is not "outside", it is unknown.
  if (!/^[/~]/u.test(base) && (base === ".." || base.startsWith("../"))) return "unknown";
  // The project's root is checked here, where every caller of the facts passes: a working
  // directory claimed at `/etc` or at a home makes nothing "project" (project-root.ts).
  const claimed = ctx.projectRoot ?? ctx.cwd;
  const project = claimed === undefined ? undefined : projectRootOf(claimed, home);
  if (project !== undefined && inside(base, project)) return "project";
  if (project === undefined && !base.startsWith("/") && !base.startsWith("~")) return "project";
  if (base === home || base === "~") return "home";
  if (inside(base, home) || base.startsWith("~/")) return "inside-home";
  if (SYSTEM_DIRS.some((dir) => inside(base, dir))) return "system";
  return "outside";
}

/**
 * Where `cd` (or `pushd`) leaves the working directory: later relative paths of the command
 * resolve against it, so `cd / && rm -rf *` names `/*`. A target that is not static, or `cd -`,
 * makes relative paths unknown.
 */
export function changeDirectory(
  ctx: PathContext,
  target: string | undefined,
  isStatic: boolean,
): PathContext {
  if (!isStatic || target === "-") return { ...ctx, cwdUnknown: true };
  const cwd = target === undefined ? (ctx.home ?? UNKNOWN_HOME) : resolve(target, ctx);
  const moved = { ...ctx, cwd, cwdUnknown: ctx.cwdUnknown === true && !/^(?:\/|~)/u.test(cwd) };
  // With no project named, the place `cd` went to is not the project: `cd; rm -rf .` is home.
  if (ctx.projectRoot === undefined && ctx.cwd === undefined && /^[/~]/u.test(cwd))
    moved.projectRoot = NO_PROJECT;
  return moved;
}

/** One operand as a path fact. A word that is not static is `unknown`, kept as written. */
export function pathFact(text: string, isStatic: boolean, ctx: PathContext): PathFact {
  const dynamicHome =
    !isStatic && HOME_PREFIX.test(text) && !/\$(?!HOME|\{HOME\})/u.test(text.slice(1));
  const relative = !/^(?:\/|~|\$\{?HOME\b)/u.test(text);
  if ((!isStatic && !dynamicHome) || (relative && ctx.cwdUnknown === true)) {
    return { path: text, class: "unknown", glob: GLOB.test(text) };
  }
  const path = resolve(text, ctx);
  if (ctx.home === undefined && fromUnknownHome(text, relative, ctx)) {
    // Above the unknown home nothing is known: `/home`, `/Users`, `/` are all possible.
    if (!inside(path, UNKNOWN_HOME)) return { path: text, class: "unknown", glob: GLOB.test(text) };
    const shown = `~${path.slice(UNKNOWN_HOME.length)}`;
    return { path: shown, class: classify(path, ctx, UNKNOWN_HOME), glob: GLOB.test(path) };
  }
  return { path, class: classify(path, ctx, ctx.home ?? UNKNOWN_HOME), glob: GLOB.test(path) };
}

/** The path starts at the home (`~`, `$HOME`, or relative to a working directory under it). */
function fromUnknownHome(text: string, relative: boolean, ctx: PathContext): boolean {
  if (HOME_PREFIX.test(text)) return true;
  return relative && ctx.cwd !== undefined && inside(ctx.cwd, UNKNOWN_HOME);
}

/** Far more than any real `{a,b}` operand makes. */
export const MAX_BRACE_WORDS = 64;

/** The first `{…}` with a comma at its own level: its start, end and the alternatives. */
function firstBraceList(text: string): { start: number; end: number; items: string[] } | undefined {
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    const items: string[] = [];
    let depth = 0;
    let from = start + 1;
    for (let i = start + 1; i < text.length; i++) {
      const c = text[i];
      if (c === "{") depth++;
      else if (c === "}" && depth > 0) depth--;
      else if (c === "," && depth === 0) {
        items.push(text.slice(from, i));
        from = i + 1;
      } else if (c === "}") {
        if (items.length === 0) break; // `{}` or `{x}`: no list here
        items.push(text.slice(from, i));
        return { start, end: i, items };
      }
    }
  }
  return undefined;
}

/**
 * Brace expansion (`/{bin,etc,usr}` → `/bin`, `/etc`, `/usr`), so a list hides no place from
 * the classification. Quoted braces expand too: over-reporting a target is safer than missing
 * one. Past MAX_BRACE_WORDS it gives undefined: the place is then unknown, never the literal
 * word (which would class `/{bin,x}{,}{,}…` as some harmless path).
 */
export function expandBraces(text: string): string[] | undefined {
  const words = [text];
  for (let i = 0; i < words.length; i++) {
    const list = firstBraceList(words[i]!);
    if (list === undefined) continue;
    const word = words[i]!;
    const expanded = list.items.map(
      (item) => word.slice(0, list.start) + item + word.slice(list.end + 1),
    );
    if (words.length - 1 + expanded.length > MAX_BRACE_WORDS) return undefined;
    words.splice(i, 1, ...expanded);
    i -= 1;
  }
  return words;
}
