/**
 * Path facts: where a path really points, and whether that place is sensitive. `~/.ssh/id_rsa`,
 * `$HOME/.ssh/id_rsa`, `/home/dev/project/../.ssh//id_rsa` and `~/.SSH/ID_RSA` (a case-blind
 * file system) are one file; a rule matching text catches one spelling. Paths are normalised
 * lexically (`~`, `$HOME`, `${HOME}`, `.`, `..`, `//`, a `file://` prefix) against the cwd and
 * project root the caller knows; symbolic links are not followed (this is pure: it reads no
 * file system), so a link inside the project that points out of it is not seen.
 */
import { posix } from "node:path";
import { z } from "zod";
import { findReaches, globReaches } from "./path-glob.js";
import { projectRootOf } from "./project-root.js";

/** A longer path is not normalised (`unparsed: "too-long"`): PATH_MAX is 4096 on Linux. */
export const MAX_PATH_CHARS = 4096;

export const SENSITIVE_LABELS = [
  "ssh",
  "private-key",
  "authorized-keys",
  "aws",
  "gcloud",
  "azure",
  "kube-config",
  "docker-config",
  "gh",
  "netrc",
  "npmrc",
  "pypirc",
  "git-credentials",
  "env-file",
  "keychain",
  "gnupg",
  "shell-startup",
  "crontab",
  "systemd-unit",
  "launchd",
  "autostart",
  "sudoers",
  "passwd",
  "shadow",
  "git-hooks",
  "ci-workflow",
  "process-environment",
  "system",
] as const;
export type SensitiveLabel = (typeof SENSITIVE_LABELS)[number];

/** What a label is about: a secret to read, or a place that runs code later (persistence). */
export const CREDENTIAL_LABELS: ReadonlySet<SensitiveLabel> = new Set([
  "ssh",
  "private-key",
  "aws",
  "gcloud",
  "azure",
  "kube-config",
  "docker-config",
  "gh",
  "netrc",
  "npmrc",
  "pypirc",
  "git-credentials",
  "env-file",
  "keychain",
  "gnupg",
  "shadow",
  "process-environment",
]);
export const PERSISTENCE_LABELS: ReadonlySet<SensitiveLabel> = new Set([
  "authorized-keys",
  "shell-startup",
  "crontab",
  "systemd-unit",
  "launchd",
  "autostart",
  "sudoers",
  "passwd",
  "git-hooks",
  "ci-workflow",
]);

export const PathFactSchema = z
  .object({
    text: z.string().describe("The path as found (at most 256 characters kept)"),
    unparsed: z.enum(["too-long", "empty"]).optional(),
    normalized: z.string().describe("`~` and $HOME expanded, `.`, `..` and `//` resolved"),
    absolute: z.boolean(),
    unresolved: z.boolean().describe("Holds a variable or `~user` hookbus could not expand"),
    glob: z.boolean().describe("Holds `*`, `?` or `[`: a pattern that may match any file"),
    insideProject: z.boolean().optional().describe("Absent when no project root is known"),
    sensitive: z.array(z.enum(SENSITIVE_LABELS)),
    credentials: z.boolean().describe("A secret lives there"),
    persistence: z.boolean().describe("Code placed there runs later (start-up, cron, keys)"),
  })
  .strict();
export type PathFact = z.infer<typeof PathFactSchema>;

export interface PathOptions {
  /** The directory relative paths start from; default the project root. */
  cwd?: string;
  /**
   * The project's root: `insideProject` is said only when it is known. A root that cannot be a
   * project's (`/`, a home, a system directory: project-root.ts) has nothing inside it.
   */
  projectRoot?: string;
  /** The user's home for `~` and $HOME; default `~` stays a home marker (`/~`), matched as home. */
  home?: string;
}

/** Home marker used when the caller does not know the home directory. */
const UNKNOWN_HOME = "/~";

/** The facts of one path. Pure; bounded by MAX_PATH_CHARS. */
export function pathFacts(text: string, options: PathOptions = {}): PathFact {
  if (text.length > MAX_PATH_CHARS) return unparsedPath(text, "too-long");
  const expanded = expandHome(stripFileScheme(text.trim()), options.home ?? UNKNOWN_HOME);
  if (expanded.path === "") return unparsedPath(text, "empty");
  const base = options.cwd ?? options.projectRoot;
  const joined =
    expanded.path.startsWith("/") || base === undefined
      ? expanded.path
      : `${base}/${expanded.path}`;
  const normalized = normalize(joined);
  const absolute = normalized.startsWith("/");
  const glob = /[*?[]/.test(text);
  // A glob is labelled by every sensitive place it could expand to (`~/.s?h/id_*` is the keys).
  const sensitive = glob
    ? unionLabels([normalized, ...globReaches(normalized)])
    : sensitiveLabels(normalized);
  const facts: PathFact = {
    text: text.slice(0, 256),
    normalized,
    absolute,
    unresolved: expanded.unresolved,
    glob,
    sensitive,
    credentials: sensitive.some((label) => CREDENTIAL_LABELS.has(label)),
    persistence: sensitive.some((label) => PERSISTENCE_LABELS.has(label)),
  };
  // A root that cannot be a project's (`/`, a home, `/etc/x`: project-root.ts) holds nothing.
  if (options.projectRoot !== undefined && absolute)
    facts.insideProject = isInside(
      normalized,
      projectRootOf(normalize(options.projectRoot), options.home ?? UNKNOWN_HOME),
    );
  return facts;
}

/**
 * The files `find <root> -name <pattern>` lists, as one path fact (its text: the root, `/**`, then the pattern) labelled
 * by every sensitive place the pattern could match under the root: `find ~ -name 'id_*'` names
 * the SSH keys. The caller decides whether the listed files are read (`-exec cat {}`, `| xargs`).
 */
export function findPathFacts(
  root: string,
  namePattern: string,
  options: PathOptions = {},
): PathFact {
  const base = pathFacts(root, options);
  if (base.unparsed !== undefined || namePattern.length > MAX_PATH_CHARS) return base;
  const sensitive = unionLabels([base.normalized, ...findReaches(base.normalized, namePattern)]);
  return {
    ...base,
    text: `${root}/**/${namePattern}`.slice(0, 256),
    glob: true,
    sensitive,
    credentials: sensitive.some((label) => CREDENTIAL_LABELS.has(label)),
    persistence: sensitive.some((label) => PERSISTENCE_LABELS.has(label)),
  };
}

function unionLabels(paths: readonly string[]): SensitiveLabel[] {
  const found = new Set(paths.flatMap(sensitiveLabels));
  return SENSITIVE_LABELS.filter((label) => found.has(label));
}

function unparsedPath(text: string, reason: "too-long" | "empty"): PathFact {
  return {
    text: text.slice(0, 256),
    unparsed: reason,
    normalized: "",
    absolute: false,
    unresolved: true,
    glob: false,
    sensitive: [],
    credentials: false,
    persistence: false,
  };
}

function stripFileScheme(text: string): string {
  if (!/^file:\/\//i.test(text)) return text;
  const rest = text.slice("file://".length);
  const local = rest.startsWith("localhost/") ? rest.slice("localhost".length) : rest;
  try {
    return decodeURIComponent(local);
  } catch {
    return local;
  }
}

/** `~`, `~/x`, `$HOME`, `${HOME}` at the start; any other `$VAR` or `~user` is unresolved. */
function expandHome(text: string, home: string): { path: string; unresolved: boolean } {
  let path = text;
  const match = /^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/.exec(path);
  if (match !== null) path = home + path.slice(match[0].length);
  else if (path.startsWith("~")) {
    const user = /^~([a-z_][a-z0-9_.-]*)(?=\/|$)/i.exec(path);
    // `~root` is /root; any other user's home is /home/<user> on most systems, so say so.
    if (user !== null)
      path = (user[1] === "root" ? "/root" : `/home/${user[1]}`) + path.slice(user[0].length);
  }
  return { path, unresolved: /\$|`|%[A-Za-z_]+%/.test(path) };
}

/** Lexical normalisation; `..` never climbs above `/`. A relative path stays relative. */
function normalize(path: string): string {
  const normalized = posix.normalize(path);
  return normalized.length > 1 ? normalized.replace(/\/+$/, "") : normalized;
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

/** A rule: a label for paths whose lower-cased form matches. */
type Rule = readonly [label: SensitiveLabel, test: (lower: string, base: string) => boolean];
type Test = (lower: string) => boolean;

/*
 * Every matcher is built once, here, and a rule only calls them: sensitiveLabels runs for every
 * path of every call's facts, and a matcher built inside a rule (`has("/.ssh")(l)`) cost a
 * closure and a string per rule per path (issue 35: the largest single cost of the facts).
 */

/** `/x/y` anywhere in the path, as whole segments. */
function has(segments: string): Test {
  const inside = `${segments}/`;
  return (lower) => lower.includes(inside) || lower.endsWith(segments);
}
/** The path is `prefix` or under it. */
function under(prefix: string): Test {
  const below = `${prefix}/`;
  return (lower) => lower === prefix || lower.startsWith(below);
}
/** Any of the tests holds. */
function any(...tests: Test[]): Test {
  return (lower) => {
    for (const test of tests) if (test(lower)) return true;
    return false;
  };
}
const named =
  (...names: string[]) =>
  (_lower: string, base: string) =>
    names.includes(base);

const SYSTEM_PREFIXES = ["/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib64", "/dev"];

const inSsh = any(has("/.ssh"), under("/etc/ssh"));
const kubeConfig = has("/.kube/config");
const gitCredentials = has("/.config/git/credentials");
const keychains = any(
  has("/library/keychains"),
  has("/.local/share/keyrings"),
  has("/.password-store"),
);
const STARTUP_FILES = new Set([
  "/etc/profile",
  "/etc/bash.bashrc",
  "/etc/zshrc",
  "/etc/environment",
]);
const startupPlaces = any(
  has("/.config/fish"),
  (l) => STARTUP_FILES.has(l),
  under("/etc/profile.d"),
  under("/etc/zsh"),
);
const cronSpool = under("/var/spool/cron");
const systemdUnits = any(
  under("/etc/systemd"),
  under("/lib/systemd"),
  under("/usr/lib/systemd"),
  has("/.config/systemd"),
  under("/etc/init.d"),
);
const launchd = any(has("/library/launchagents"), has("/library/launchdaemons"));
const autostart = any(has("/.config/autostart"), under("/etc/xdg/autostart"));
const workflows = has("/.github/workflows");
const system = any(...SYSTEM_PREFIXES.map(under));

const RULES: readonly Rule[] = [
  ["authorized-keys", named("authorized_keys", "authorized_keys2")],
  // Host keys others may know (`known_hosts`, `*.pub`) are not secrets; every other file there is.
  ["ssh", (l, b) => inSsh(l) && !isPublicSshFile(b)],
  [
    "private-key",
    (_l, b) => /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/.test(b) || /\.(p12|pfx)$/.test(b),
  ],
  ["aws", has("/.aws")],
  ["gcloud", has("/.config/gcloud")],
  ["azure", has("/.azure")],
  ["kube-config", (l) => kubeConfig(l) || l.endsWith("/kubeconfig")],
  ["docker-config", has("/.docker/config.json")],
  ["gh", has("/.config/gh")],
  ["netrc", named(".netrc", "_netrc")],
  ["npmrc", named(".npmrc", ".yarnrc", ".yarnrc.yml")],
  ["pypirc", named(".pypirc", "pip.conf")],
  ["git-credentials", (l, b) => b === ".git-credentials" || gitCredentials(l)],
  [
    "env-file",
    (_l, b) => (b === ".env" || b.startsWith(".env.") || b === ".envrc") && !isEnvTemplate(b),
  ],
  ["keychain", (l, b) => keychains(l) || /\.keychain(-db)?$/.test(b)],
  ["gnupg", has("/.gnupg")],
  [
    "shell-startup",
    (l, b) =>
      /^\.(bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|zlogin|zlogout|kshrc|cshrc|tcshrc|inputrc)$/.test(
        b,
      ) || startupPlaces(l),
  ],
  [
    "crontab",
    (l, b) =>
      b === "crontab" || b === "anacrontab" || /^\/etc\/cron\.[a-z]+(\/|$)/.test(l) || cronSpool(l),
  ],
  ["systemd-unit", systemdUnits],
  ["launchd", launchd],
  ["autostart", autostart],
  // Prefixes, not names: `/etc/shadow-` and `/etc/sudoers.tmp` are copies of the same secrets.
  ["sudoers", (l) => l.startsWith("/etc/sudoers")],
  ["passwd", (l) => l.startsWith("/etc/passwd") || l.startsWith("/etc/group")],
  ["shadow", (l) => l.startsWith("/etc/shadow") || l.startsWith("/etc/gshadow")],
  ["git-hooks", has("/.git/hooks")],
  ["ci-workflow", (l) => workflows(l) || l.endsWith("/.gitlab-ci.yml")],
  ["process-environment", (l) => /^\/proc\/[^/]+\/environ$/.test(l)],
  ["system", system],
];

/** `known_hosts`, `*.pub`: what an SSH directory holds that is meant to be shared. */
function isPublicSshFile(base: string): boolean {
  return base === "known_hosts" || base === "known_hosts.old" || base.endsWith(".pub");
}

/**
 * `.env.example`, `.env.sample`, `.env.template`, `.env.dist`: the checked-in list of variable
 * names a project documents, by convention without values. Only these exact names: a suffix
 * after them (`.env.example.local`) or any other (`.env.production`) is a credential file.
 */
function isEnvTemplate(base: string): boolean {
  return /^\.env\.(example|sample|template|dist)$/.test(base);
}

/**
 * Every label whose rule matches. Matched case-blind (macOS and Windows file systems are), and on
 * the path with a leading `/`, so a relative `.ssh/id_rsa` matches `/.ssh` too. Home files match
 * wherever the home is (`/root`, `/Users/x`, `/var/lib/jenkins`): the rules read segments.
 */
function sensitiveLabels(normalized: string): SensitiveLabel[] {
  // What a C library opens ends at a NUL; Windows reads `\` as `/` and has drive letters.
  let lower = normalized.toLowerCase();
  const nul = lower.indexOf("\0");
  if (nul !== -1) lower = lower.slice(0, nul);
  if (lower.includes("\\"))
    lower = posix.normalize(lower.replace(/\\/g, "/").replace(/^[a-z]:/, ""));
  // A relative path that climbs from an unknown place (`../../etc/passwd`) may land anywhere,
  // and /proc/<pid>/root and /proc/<pid>/cwd are links to `/` and to a cwd: what follows the
  // climb or the link is read as if from `/`.
  if (lower.startsWith("../")) lower = lower.replace(/^(\.\.\/)+/, "");
  if (lower.startsWith("/proc/")) lower = lower.replace(/^(\/proc\/[^/]+\/(root|cwd))+(?=\/)/, "");
  if (!lower.startsWith("/")) lower = `/${lower}`;
  const base = lower.slice(lower.lastIndexOf("/") + 1);
  const labels: SensitiveLabel[] = [];
  for (const [label, test] of RULES) if (test(lower, base)) labels.push(label);
  return labels;
}
