/**
 * What a glob could expand to, among the places that hold secrets. `cat ~/.s?h/id_*` names no
 * credential file in its text, yet the shell hands `cat` the SSH keys; `find ~ -name 'id_*'
 * -exec cat {} \;` does the same through find. Pure (no file system is read): a glob is matched
 * against a table of well-known sensitive places, and path.ts labels each place it could reach.
 * Any pattern that reaches one of them gets that place's labels: a class (every glob over
 * every such place), not a list of spellings.
 */

/**
 * Well-known sensitive places, as segments. Home places are matched wherever the home is (the
 * label rules in path.ts read segments too); system places only from `/`. Where each comes from:
 * OpenSSH's default key names (ssh-keygen(1)), the AWS, gcloud, Azure, kubectl, Docker, gh CLIs'
 * default credential files, netrc(5), npm/pip/git credential stores, dotenv's `.env`, GnuPG's
 * and pass's stores, macOS keychains, the shells' start-up files, shadow(5), sudoers(5).
 */
const HOME_PLACES: readonly string[] = [
  ".ssh/id_rsa",
  ".ssh/id_ecdsa",
  ".ssh/id_ed25519",
  ".ssh/id_dsa",
  ".ssh/authorized_keys",
  ".aws/credentials",
  ".config/gcloud/credentials.db",
  ".azure/accessTokens.json",
  ".kube/config",
  ".docker/config.json",
  ".config/gh/hosts.yml",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  ".env",
  ".envrc",
  ".gnupg/private-keys-v1.d",
  ".password-store",
  "Library/Keychains/login.keychain-db",
  ".local/share/keyrings/login.keyring",
  ".bashrc",
  ".bash_profile",
  ".zshrc",
  ".profile",
];
const SYSTEM_PLACES: readonly string[] = [
  "etc/shadow",
  "etc/gshadow",
  "etc/passwd",
  "etc/sudoers",
  "etc/ssh/ssh_host_rsa_key",
  "etc/ssh/ssh_host_ed25519_key",
  "proc/self/environ",
];

const split = (path: string) => path.split("/").filter((s) => s !== "");
const HOME_SEGMENTS = HOME_PLACES.map(split);
const SYSTEM_SEGMENTS = SYSTEM_PLACES.map(split);

/** Far above any real glob; a longer one is matched by its text only. */
const MAX_GLOB_SEGMENTS = 64;

/**
 * One segment's pattern as a regular expression: `*`, `?`, `[…]` (`[!…]` too), the rest literal.
 * `shellDots`: as the shell, a leading wildcard does not match a leading dot (`*` is not `.ssh`);
 * find's `-name` has no such rule.
 */
function segmentRegex(pattern: string, shellDots: boolean): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) source += "\\[";
      else {
        const body = pattern
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        source += `[${body}]`;
        i = end;
      }
    } else source += c.replace(/[.+^${}()|\\]/g, "\\$&");
  }
  const noDot = shellDots && /^[*?[]/.test(pattern) ? "(?!\\.)" : "";
  try {
    return new RegExp(`^${noDot}${source}$`, "i");
  } catch {
    return /^[^/]*$/; // a bracket the engine refuses (`[z-a]`): it may match any name, never none
  }
}

function segmentsMatch(patterns: readonly RegExp[], names: readonly string[]): boolean {
  return patterns.length === names.length && patterns.every((p, i) => p.test(names[i]!));
}

/**
 * The sensitive places (absolute, `/`-joined) a shell glob could expand to: the glob's last
 * segments matching a home place or one of its directories (`~/.s?h` is `.ssh`), or the whole
 * glob matching a system place. Empty for a glob that reaches none.
 */
export function globReaches(normalized: string): string[] {
  const segments = split(normalized.toLowerCase());
  if (segments.length > MAX_GLOB_SEGMENTS) return [];
  const patterns = segments.map((s) => segmentRegex(s, true));
  const found: string[] = [];
  for (const place of HOME_SEGMENTS) {
    for (let k = 1; k <= place.length; k++) {
      const prefix = place.slice(0, k).map((s) => s.toLowerCase());
      if (k <= patterns.length && segmentsMatch(patterns.slice(-k), prefix))
        found.push(`/${prefix.join("/")}`);
    }
  }
  if (normalized.startsWith("/"))
    for (const place of SYSTEM_SEGMENTS)
      for (let k = 1; k <= place.length; k++)
        if (segmentsMatch(patterns, place.slice(0, k)))
          found.push(`/${place.slice(0, k).join("/")}`);
  return [...new Set(found)];
}

/**
 * The sensitive places `find <root> -name <pattern>` could list: a place any of whose segments
 * the pattern matches (find descends into dot directories and `-name '*'` matches dot files),
 * under the root for a system place; home places may be under any root (a project holds a `.env`).
 */
export function findReaches(root: string, namePattern: string): string[] {
  const pattern = segmentRegex(namePattern.toLowerCase(), false);
  const rootSegments = split(root.toLowerCase());
  const found: string[] = [];
  for (const place of HOME_SEGMENTS)
    place.forEach((name, j) => {
      if (pattern.test(name)) found.push(`/${place.slice(0, j + 1).join("/")}`);
    });
  for (const place of SYSTEM_SEGMENTS) {
    const underRoot = rootSegments.every((s, i) => place[i] === s);
    if (underRoot && root.startsWith("/"))
      place.forEach((name, j) => {
        if (j >= rootSegments.length && pattern.test(name))
          found.push(`/${place.slice(0, j + 1).join("/")}`);
      });
  }
  return [...new Set(found)];
}
