/**
 * Programs that run another program: `sudo`, `env`, `nice`, `timeout`, `xargs`, `busybox`, … and
 * those that run a script (`sh -c`, `eval`, `su -c`, `watch`). Each is described by its option
 * grammar, so `sudo -u root env X=1 nice -n 5 rm -rf ~` unwraps to `rm -rf ~` with the wrappers
 * kept in `via`, and an option's value is never mistaken for the program.
 */
import type { WordValue } from "./words.js";

export interface WrapperSpec {
  /** Short options that take a value (`-u root`, `-uroot`). */
  valued: string;
  /** Long options that take a value when written without `=`. */
  longValued?: readonly string[];
  /** Positional arguments before the program (`timeout 30`, `chroot /srv`, `flock lockfile`). */
  skip?: number;
  /** `NAME=VALUE` words before the program (`env X=1 cmd`). */
  assignments?: boolean;
  /** A short option whose value is a script (`su -c`, `flock -c`, `env -S`). */
  scriptOption?: string;
  /** Its long spelling (`su --command=…`, `env --split-string …`). */
  longScriptOption?: string;
  /** The rest of the words are a script (`watch`, `eval`), not a program and its arguments. */
  restIsScript?: boolean;
  /** The program's operands come from its input (`xargs`). */
  fromInput?: boolean;
  /** It raises privileges. */
  elevates?: boolean;
}

const ELEVATE: Pick<WrapperSpec, "elevates"> = { elevates: true };

export const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  sudo: {
    valued: "ugpChDRTUrt",
    longValued: ["user", "group", "host", "prompt", "chdir", "role", "type", "other-user"],
    ...ELEVATE,
  },
  doas: { valued: "uC", ...ELEVATE },
  pkexec: { valued: "", longValued: ["user"], ...ELEVATE },
  su: {
    valued: "sgGwC",
    longValued: ["shell", "group", "supp-group", "whitelist-environment"],
    scriptOption: "c",
    longScriptOption: "command",
    skip: 1,
    ...ELEVATE,
  },
  runuser: {
    valued: "ugsGw",
    longValued: ["user", "group", "shell"],
    scriptOption: "c",
    longScriptOption: "command",
    ...ELEVATE,
  },
  env: {
    valued: "uCP",
    longValued: ["unset", "chdir"],
    assignments: true,
    scriptOption: "S",
    longScriptOption: "split-string",
  },
  nice: { valued: "n", longValued: ["adjustment"] },
  ionice: { valued: "cnpPu" },
  renice: { valued: "ngpu" },
  timeout: { valued: "sk", longValued: ["signal", "kill-after"], skip: 1 },
  nohup: { valued: "" },
  time: { valued: "fo", longValued: ["format", "output"] },
  exec: { valued: "a" },
  builtin: { valued: "" },
  stdbuf: { valued: "ioe", longValued: ["input", "output", "error"] },
  setsid: { valued: "" },
  taskset: { valued: "", skip: 1 },
  chroot: { valued: "", longValued: ["userspec", "groups"], skip: 1 },
  flock: { valued: "wEn", scriptOption: "c", longScriptOption: "command", skip: 1 },
  unbuffer: { valued: "" },
  caffeinate: { valued: "tw" },
  strace: { valued: "eoOpsSuEIXaAbP" },
  ltrace: { valued: "eoOpsSuEIXaAbPn" },
  xargs: {
    valued: "adEILnPs",
    longValued: ["arg-file", "delimiter", "max-args", "max-procs", "max-chars", "max-lines"],
    fromInput: true,
  },
  watch: { valued: "nq", longValued: ["interval"], restIsScript: true },
  // Programs that start a command elsewhere (a pty, a terminal session, a unit, many jobs).
  script: { valued: "cEIOTB", scriptOption: "c", longScriptOption: "command", skip: 1 },
  "systemd-run": {
    valued: "pMEHu",
    longValued: ["unit", "property", "description", "slice", "uid", "gid", "setenv", "machine"],
  },
  screen: { valued: "SceplTtRrx" },
  parallel: {
    valued: "jSaEIdkn",
    longValued: ["jobs", "sshlogin", "arg-file", "delimiter", "max-args", "colsep"],
    fromInput: true,
  },
  eval: { valued: "", restIsScript: true },
  command: { valued: "" },
};

/** Shells that run their `-c` argument as a script. */
export const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "ash",
  "mksh",
  "fish",
  "tcsh",
  "csh",
  "posh",
  "yash",
  "rbash",
]);

export interface OptionScan {
  /** Index of the first word after the options (the program, or a positional to skip). */
  next: number;
  /** The script given to the script option, when present. */
  script?: WordValue;
  /** Every option letter or long name seen. */
  seen: Set<string>;
}

function takesValue(spec: WrapperSpec, letter: string): boolean {
  return spec.valued.includes(letter) || spec.scriptOption === letter;
}

/**
 * Scans the wrapper's own options, starting after its name (or at `from`: GNU getopt permutes,
 * so `su root -c '…'` and `flock lockfile -c '…'` have options after a positional too).
 */
export function scanOptions(words: readonly WordValue[], spec: WrapperSpec, from = 1): OptionScan {
  const seen = new Set<string>();
  let script: WordValue | undefined;
  let i = from;
  for (; i < words.length; i++) {
    const word = words[i]?.text ?? "";
    if (word === "--") return { next: i + 1, seen, ...(script && { script }) };
    if (word.startsWith("--") && word.length > 2) {
      const eq = word.indexOf("=");
      const name = eq === -1 ? word.slice(2) : word.slice(2, eq);
      seen.add(name);
      if (name === spec.longScriptOption) {
        const value = eq === -1 ? words[++i] : { ...words[i]!, text: word.slice(eq + 1) };
        if (value !== undefined) script = value;
      } else if (eq === -1 && spec.longValued?.includes(name)) i += 1;
      continue;
    }
    if (!word.startsWith("-") || word === "-") break;
    if (/^-\d+$/u.test(word)) continue; // `nice -10`
    for (let k = 1; k < word.length; k++) {
      const letter = word[k] ?? "";
      seen.add(letter);
      if (!takesValue(spec, letter)) continue;
      const attached = word.slice(k + 1);
      const value = attached === "" ? words[++i] : { text: attached, static: true };
      if (letter === spec.scriptOption && value !== undefined) script = value;
      break;
    }
  }
  return { next: i, seen, ...(script && { script }) };
}

export interface ShellScan {
  script?: WordValue;
  next: number;
  /** `-s`: the script is the input, and the operands are its arguments (`bash -s -- --yes`). */
  fromInput: boolean;
}

/**
 * The script option anywhere before `--`: GNU getopt permutes, so `su - root -c '…'` and
 * `flock /tmp/lock -c '…'` give it after positionals.
 */
export function permutedScript(
  words: readonly WordValue[],
  spec: WrapperSpec,
  from: number,
): WordValue | undefined {
  for (let i = from; i < words.length && words[i]?.text !== "--";) {
    const scan = scanOptions(words, spec, i);
    if (scan.script !== undefined) return scan.script;
    i = Math.max(scan.next, i + 1);
  }
  return undefined;
}

/** Shell options before the operands; `-c` makes the first operand the script. */
export function scanShell(words: readonly WordValue[]): ShellScan {
  let command = false;
  let fromInput = false;
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i]?.text ?? "";
    if (word === "--" || word === "-") {
      i += 1;
      break;
    }
    if (/^[-+]o$/u.test(word)) {
      i += 1;
      continue;
    }
    if (!/^[-+]/u.test(word)) break;
    if (!word.startsWith("--") && word.slice(1).includes("c")) command = true;
    if (/^-[A-Za-z]*s/u.test(word)) fromInput = true;
  }
  const script = command ? words[i] : undefined;
  return { next: command ? i + 1 : i, fromInput: fromInput && !command, ...(script && { script }) };
}

export function basename(program: string): string {
  const slash = program.lastIndexOf("/");
  return slash === -1 ? program : program.slice(slash + 1);
}
