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

/**
 * Per tool: options that take a value, so the value is never read as an operand: `git -C dir
 * push --force` is the subcommand `push`, `head -n 50 f` reads `f`, not a file called `50`.
 */
const VALUED: Readonly<Record<string, ReadonlySet<string>>> = {
  git: new Set(["C", "c", "git-dir", "work-tree", "namespace", "exec-path", "config-env"]),
  head: new Set(["n", "c", "lines", "bytes"]),
  tail: new Set(["n", "c", "lines", "bytes", "pid", "sleep-interval"]),
  shred: new Set(["n", "s", "iterations", "size", "random-source"]),
  truncate: new Set(["s", "r", "size", "reference"]),
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
  const valued = VALUED[program];
  const flags = new Set<string>();
  const operands: string[] = [];
  let ended = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
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
      if (valued?.has(name) === true && !arg.includes("=")) i += 1;
      continue;
    }
    for (let k = 1; k < arg.length; k++) {
      const letter = arg[k] ?? "";
      flags.add(map[letter] ?? letter);
      // `-n5` carries its value; `-n 5` takes the next word.
      if (valued?.has(letter) === true) {
        if (k === arg.length - 1) i += 1;
        break;
      }
    }
  }
  return { flags: [...flags], operands };
}
