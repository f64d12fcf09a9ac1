/**
 * Flags as a rule means them: `-rvf`, `-r -v -f`, `-R -f` and `--recursive --force` are the same
 * request to `rm`, so they give the same flags (`r`, `v`, `f`). Long names are mapped for the tools
 * where a rule tests them; any other long flag keeps its name (`--dry-run` → `dry-run`).
 */

/** Per tool: flag spelling → normalised flag. `r` always means recursive, `f` forced. */
const FLAG_MAPS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  rm: { R: "r", recursive: "r", force: "f", verbose: "v", dir: "d", interactive: "i" },
  cp: { R: "r", recursive: "r", force: "f", archive: "a", verbose: "v" },
  mv: { force: "f", verbose: "v" },
  chmod: { R: "r", recursive: "r", verbose: "v" },
  chown: { R: "r", recursive: "r", verbose: "v" },
  chgrp: { R: "r", recursive: "r", verbose: "v" },
  shred: { remove: "u", zero: "z", force: "f", iterations: "n" },
  rmdir: { parents: "p" },
  git: { force: "f" },
  ln: { force: "f", symbolic: "s" },
};

/** Tools whose options are whole words after one dash (`find -delete`, `find -exec`). */
const WORD_OPTIONS = new Set(["find", "java", "gcc", "g++", "clang", "dig", "go"]);

export interface SplitArgs {
  flags: string[];
  operands: string[];
}

/** Splits the arguments of one program into normalised flags and operands. */
export function splitArgs(program: string, args: readonly string[]): SplitArgs {
  const map = FLAG_MAPS[program] ?? {};
  const flags = new Set<string>();
  const operands: string[] = [];
  let ended = false;
  for (const arg of args) {
    if (ended || arg === "-" || !arg.startsWith("-")) {
      operands.push(arg);
      continue;
    }
    if (arg === "--") {
      ended = true;
      continue;
    }
    if (arg.startsWith("--") || WORD_OPTIONS.has(program)) {
      const name = arg.replace(/^--?/u, "").split("=", 1)[0] ?? "";
      flags.add(map[name] ?? name);
      continue;
    }
    for (const letter of arg.slice(1)) flags.add(map[letter] ?? letter);
  }
  return { flags: [...flags], operands };
}
