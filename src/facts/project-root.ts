/**
 * Which directories can be a project's root. The shell facts take the working directory for the
 * project's root, and the path facts say `insideProject` against the root they are given: a root
 * at `/`, a top-level directory (`/usr`), a home (`/home/dev`, or the home itself wherever it is)
 * or under `/etc`, `/root`, `/boot`, … would make `rm -rf /etc` or `rm -rf /home/dev` "project",
 * and an agent can claim any working directory. Such a directory is never a project root (paths
 * still resolve from it: `cd / && rm -rf *` is root). One rule for every caller of the facts.
 */

/** Matches no path: the project root when the directory given cannot be one. */
export const NO_PROJECT = "\u0000no-project";

/** Top-level directories that hold homes: `/home/<user>` and `/Users/<user>` are homes. */
const HOMES = new Set(["home", "Users"]);
/** Top-level directories no project lives in: a directory under one is never a project root. */
const SYSTEM_ONLY = new Set([
  "bin",
  "boot",
  "dev",
  "etc",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "proc",
  "root",
  "run",
  "sbin",
  "sys",
]);

/**
 * `dir` when it can be a project's root, else NO_PROJECT. `dir` is a normalised path; a relative
 * one (a `cd sub` from a start nobody named) is kept: it names no system place. `home` is the
 * user's home as the caller resolves `~`: it and any directory holding it are not projects.
 */
export function projectRootOf(dir: string, home?: string): string {
  if (!dir.startsWith("/")) return dir;
  const parts = dir.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) return NO_PROJECT;
  const root = `/${parts.join("/")}`;
  if (home !== undefined && (home === root || home.startsWith(`${root}/`))) return NO_PROJECT;
  const isHome = parts.length === 2 && HOMES.has(parts[0]!);
  return parts.length < 2 || isHome || SYSTEM_ONLY.has(parts[0]!) ? NO_PROJECT : dir;
}
