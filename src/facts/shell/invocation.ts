/**
 * One collected command: unwrap its wrappers, record what finally runs, and the effects a rule
 * asks about (deletions, network, interpreters and their one-liners, nested scripts).
 */
import type { RawCommand } from "./collect.js";
import type { Analysis, Final } from "./context.js";
import { splitArgs } from "./flags.js";
import { codeSource, languageOf, scanCode, type Language } from "./interpreters.js";
import { ShellLimitError } from "./limits.js";
import { networkFact, redirectNetworkFact, sshRemoteCommand } from "./network.js";
import { changeDirectory, expandBraces, pathFact } from "./paths.js";
import type { PathFact } from "./schema.js";
import { basename, permutedScript, scanOptions, scanShell, SHELLS, WRAPPERS } from "./wrappers.js";
import type { WordValue } from "./words.js";

/** Programs whose operands are paths even when they look like plain words. */
const FILE_TOOLS = new Set([
  ..."rm rmdir unlink shred cp mv ln chmod chown chgrp touch mkdir cat tee truncate".split(" "),
  ..."find ls du stat head tail less more source . install dd tar zip unzip".split(" "),
]);
const DELETERS = new Set(["rm", "rmdir", "unlink", "shred", "srm", "wipe"]);
const INPUT_MARK: PathFact = { path: "(input)", class: "unknown", glob: false };

interface Unwrapped {
  words: WordValue[];
  via: string[];
  fromInput: boolean;
}

function programOf(word: WordValue | undefined): string {
  if (word === undefined) return "";
  return word.static ? basename(word.text) : "?";
}

/** Peels `sudo`, `env`, `nice`, `xargs`, `busybox`… off the front; nested scripts go down. */
function unwrap(analysis: Analysis, raw: RawCommand, nesting: number): Unwrapped {
  let words = raw.words;
  const via = [...raw.via];
  let fromInput = false;
  for (let hops = 0; ; hops++) {
    if (hops > analysis.limits.maxNesting * 2) {
      throw new ShellLimitError("too-deep", `more than ${analysis.limits.maxNesting * 2} wrappers`);
    }
    const program = programOf(words[0]);
    const spec = WRAPPERS[program];
    if (program === "busybox" || program === "toybox") {
      if (words.length < 2 || (words[1]?.text ?? "-").startsWith("-")) break;
    } else if (spec === undefined) break;
    analysis.acc.programs.add(program);
    analysis.acc.wrappers.add(program);
    if (spec === undefined) {
      via.push(program);
      words = words.slice(1);
      continue;
    }
    const scan = scanOptions(words, spec);
    if (program === "command" && (scan.seen.has("v") || scan.seen.has("V"))) break;
    if (spec.elevates === true) analysis.acc.elevated = true;
    if (scan.script !== undefined) nestedScript(analysis, scan.script, [...via, program], nesting);
    let next = scan.next;
    if (spec.restIsScript === true) {
      const script = words.slice(next);
      const text = script.map((w) => w.text).join(" ");
      nestedScript(
        analysis,
        { text, static: script.every((w) => w.static) },
        [...via, program],
        nesting,
      );
      return { words: [], via, fromInput };
    }
    if (spec.assignments === true) {
      while (/^[A-Za-z_][A-Za-z0-9_]*=/u.test(words[next]?.text ?? "")) next += 1;
    }
    next += spec.skip ?? 0;
    if (spec.skip !== undefined && spec.scriptOption !== undefined && scan.script === undefined) {
      const script = permutedScript(words, spec, next);
      if (script !== undefined) {
        nestedScript(analysis, script, [...via, program], nesting);
        return { words: [], via, fromInput };
      }
    }
    fromInput ||= spec.fromInput === true;
    const rest = words.slice(next);
    if (rest.length === 0 || program === "su") return { words: [], via, fromInput };
    via.push(program);
    words = rest;
  }
  return { words, via, fromInput };
}

function nestedScript(analysis: Analysis, script: WordValue, via: string[], nesting: number): void {
  if (!script.static) analysis.acc.dynamic = true;
  analysis.script(script.text, via, nesting + 1);
}

function wantsPaths(program: string, operand: WordValue | string): boolean {
  if (FILE_TOOLS.has(program)) return true; // every operand, so no deletion target is left out
  const text = typeof operand === "string" ? operand : operand.text;
  if (/[\s;()'"]/u.test(text)) return false; // code or prose, not a path
  if (/^[a-z][a-z0-9+.-]*:\/\//iu.test(text)) return false; // a URL
  return /^[~./]|^\$\{?HOME\b|\//u.test(text);
}

/** Records the command that finally runs and its effects; returns what later steps need. */
export function analyseInvocation(analysis: Analysis, raw: RawCommand, nesting: number): Final {
  const none: Final = { program: "", args: [], readsInput: false, network: false };
  for (const r of raw.redirects) {
    analysis.acc.redirects.push({
      mode: r.mode,
      target: pathFact(r.target.text, r.target.static, analysis.paths),
      program: programOf(raw.words[0]) || "{…}",
    });
    const net = redirectNetworkFact(r.target.text, r.mode);
    if (net !== undefined) analysis.acc.network.push(net);
  }
  if (raw.words.length === 0) return none;
  const { words, via, fromInput } = unwrap(analysis, raw, nesting);
  if (words.length === 0) return none;
  const final = record(analysis, raw, { words, via, fromInput }, nesting);
  reverseShell(analysis, raw, final.program);
  return final;
}

/** A shell or interpreter whose input or output is a `/dev/tcp` socket: a reverse shell. */
function reverseShell(analysis: Analysis, raw: RawCommand, program: string): void {
  if (languageOf(program) === undefined) return;
  if (raw.redirects.some((r) => redirectNetworkFact(r.target.text, r.mode) !== undefined))
    analysis.acc.addCall({ interpreter: program, call: "exec" });
}

/** One operand's paths: each word of its brace expansion; too many words is an unknown place. */
function operandPaths(op: string, isStatic: boolean, paths: Analysis["paths"]): PathFact[] {
  const words = expandBraces(op);
  if (words === undefined) return [pathFact(op, false, paths)];
  return words.map((word) => pathFact(word, isStatic, paths));
}

/** `dd if=… of=…`: the files are the values of `if=` and `of=`, not the words. */
function ddOperands(operands: readonly string[]): string[] {
  return operands.flatMap((op) => {
    const match = /^(?:if|of)=(.+)$/su.exec(op);
    return match === null ? [] : [match[1] ?? ""];
  });
}

function record(analysis: Analysis, raw: RawCommand, run: Unwrapped, nesting: number): Final {
  const { acc, paths } = analysis;
  const program = programOf(run.words[0]);
  const argWords = run.words.slice(1);
  const args = argWords.map((w) => w.text);
  const { flags, operands } = splitArgs(program, args);
  const staticOf = new Map(argWords.map((w) => [w.text, w.static]));
  for (const op of program === "dd" ? operands : [])
    staticOf.set(op.replace(/^[io]f=/u, ""), staticOf.get(op) ?? true);
  const pathFacts =
    program === "find"
      ? findStarts(analysis, argWords)
      : (program === "dd" ? ddOperands(operands) : operands)
          .filter((op) => wantsPaths(program, op) || staticOf.get(op) === false)
          .flatMap((op) => operandPaths(op, staticOf.get(op) ?? true, paths));
  if (run.fromInput) pathFacts.push(INPUT_MARK);
  acc.programs.add(program);
  if (program === "?") acc.dynamic = true;
  for (const wrapper of run.via) acc.wrappers.add(wrapper);
  acc.commands.push({
    program,
    argv: [run.words[0]?.text ?? "", ...args],
    flags,
    operands,
    paths: pathFacts,
    via: run.via,
    dynamic: program === "?",
    operandsFromInput: run.fromInput,
  });
  const deletionsBefore = acc.deletions.length;
  deletion(analysis, program, { flags, paths: pathFacts });
  if (program === "cd" || program === "pushd") {
    const target = argWords.find((w) => !/^-[LPe@]+$/u.test(w.text));
    analysis.paths = changeDirectory(analysis.paths, target?.text, target?.static ?? true);
  }
  if (program === "find") findExec(analysis, raw, run, nesting);
  if (program === "alias") aliasBodies(analysis, argWords, run.via, nesting);
  const hasInput =
    (raw.pipeline?.stage ?? 0) > 0 ||
    raw.stdin !== undefined ||
    raw.redirects.some((r) => r.mode === "read");
  const net = networkFact({ program, args, hasInput });
  if (net !== undefined) acc.network.push(net);
  const remote = program === "ssh" ? sshRemoteCommand(args) : undefined;
  if (remote !== undefined) {
    // It runs on another machine, but it is still what the agent asked for: `ssh prod rm -rf /`.
    analysis.script(remote, [...run.via, `ssh ${net?.hosts[0] ?? "?"}`], nesting + 1);
  }
  if (/^(?:nc|ncat|netcat)$/u.test(program) && /(?:^|\s)-[A-Za-z]*[ec]\b/u.test(args.join(" "))) {
    acc.addCall({ interpreter: program, call: "exec" });
  }
  if (program === "source" || program === ".")
    substitutionFeed(analysis, program, argWords[0], { via: run.via, nesting });
  const readsInput = interpreter(analysis, raw, run, program, args, nesting);
  const final: Final = { program, args, readsInput, network: net !== undefined };
  const deleted = acc.deletions.length - 1;
  if (run.fromInput && deleted >= deletionsBefore) final.inputDeletion = deleted;
  // Only a pipeline stage's output can reach `xargs rm`: do not resolve every `echo` word.
  const printed = raw.pipeline === undefined ? undefined : prints(analysis, program, argWords);
  if (printed !== undefined) final.prints = printed;
  return final;
}

function deletion(
  analysis: Analysis,
  program: string,
  split: { flags: string[]; paths: PathFact[] },
): void {
  const { flags, paths } = split;
  if (DELETERS.has(program) && !(program === "shred" && !flags.includes("u"))) {
    const recursive = program === "rm" && flags.includes("r");
    analysis.acc.deletions.push({ program, recursive, targets: paths });
  }
  // `rsync --delete src/ dest/` deletes whatever dest holds that src does not: the tree at dest.
  const destination = paths.at(-1);
  if (program === "rsync" && flags.some((f) => /^del(?:ete)?(?:-|$)/u.test(f)) && destination)
    analysis.acc.deletions.push({ program, recursive: true, targets: [destination] });
  if (program === "find" && flags.includes("delete")) {
    analysis.acc.deletions.push({ program, recursive: true, targets: paths }); // its start paths
  }
}

/**
 * `alias ll='rm -rf /'`: the body runs when the name is used (a script that turns on
 * `expand_aliases`, or an interactive shell). Counted as running, as function bodies are.
 */
function aliasBodies(
  analysis: Analysis,
  argWords: readonly WordValue[],
  via: readonly string[],
  nesting: number,
): void {
  for (const word of argWords) {
    const eq = word.text.indexOf("=");
    if (eq <= 0 || word.text.startsWith("-")) continue;
    const body = { text: word.text.slice(eq + 1), static: word.static };
    nestedScript(analysis, body, [...via, `alias ${word.text.slice(0, eq)}`], nesting);
  }
}

/** What `ls`, `find` and `echo` print, as paths, for `… | xargs rm` to delete. */
function prints(
  analysis: Analysis,
  program: string,
  argWords: readonly WordValue[],
): PathFact[] | undefined {
  if (program === "find") return findStarts(analysis, argWords);
  const operands = argWords.filter((w) => !w.text.startsWith("-"));
  if (program === "ls") {
    const dirs = operands.length > 0 ? operands : [{ text: ".", static: true }];
    // `ls /` prints the entries of `/`: the glob `/*`, which is what a rule calls root.
    return dirs.map((d) => pathFact(`${d.text.replace(/\/+$/u, "")}/*`, d.static, analysis.paths));
  }
  if (program === "echo" || program === "printf") {
    // `printf '/\n'` and `echo -e '/etc\n/usr'` print words, not one path with a `\n` in it.
    return operands.flatMap((w) =>
      w.text
        .split(/\s+|\\[nt]/u)
        .filter((word) => word !== "")
        .map((word) => pathFact(word, w.static, analysis.paths)),
    );
  }
  return undefined;
}

/** `find … -exec CMD … ;` and `-execdir`, `-ok`: CMD runs with find's results as operands. */
function findExec(analysis: Analysis, raw: RawCommand, run: Unwrapped, nesting: number): void {
  const words = run.words;
  const deletionsBefore = analysis.acc.deletions.length;
  for (let i = 1; i < words.length; i++) {
    if (!/^-(?:exec|execdir|ok|okdir)$/u.test(words[i]?.text ?? "")) continue;
    const end = words.findIndex((w, k) => k > i && (w.text === ";" || w.text === "+"));
    const group = words.slice(i + 1, end === -1 ? undefined : end);
    const inner = group.map((w) => (w.text === "{}" ? { text: "{}", static: false } : w));
    if (inner.length > 0) {
      const nested: RawCommand = { words: inner, via: [...run.via, "find -exec"], redirects: [] };
      const unwrapped = unwrap(analysis, nested, nesting);
      if (unwrapped.words.length > 0)
        record(analysis, nested, { ...unwrapped, fromInput: true }, nesting);
    }
    i = end === -1 ? words.length : end;
  }
  // `find / -exec rm {} +` deletes everything find finds: the tree under its start paths, not
  // an unknown `{}`. The nested deletions are replaced by that one.
  const nested = analysis.acc.deletions.splice(deletionsBefore);
  if (nested[0] !== undefined) {
    const targets = findStarts(analysis, words.slice(1));
    analysis.acc.deletions.push({ program: nested[0].program, recursive: true, targets });
  }
}

/** find's start paths: the operands before its first expression (`.` when there are none). */
function findStarts(analysis: Analysis, words: readonly WordValue[]): PathFact[] {
  const end = words.findIndex((w) => /^[-(!]/u.test(w.text));
  const starts = words.slice(0, end === -1 ? undefined : end);
  if (starts.length === 0) return [pathFact(".", true, analysis.paths)];
  return starts.map((w) => pathFact(w.text, w.static, analysis.paths));
}

const NETWORK_WORDS = /\b(?:curl|wget|nc|ncat|netcat|socat|ssh|scp|rsync|git|ftp|tftp|telnet)\b/gu;
const DECODE_WORDS =
  /\b(?:base64|base32|basenc|xxd|openssl|gunzip|zcat|bunzip2|bzcat|unxz|xzcat|unzstd|uudecode)\b/gu;

/**
 * `bash <(curl …)`, `source <(…)`: the program is the output of a process substitution. Its
 * commands are facts of their own; the feed names the network and decode programs in its text.
 */
function substitutionFeed(
  analysis: Analysis,
  interpreter: string,
  word: WordValue | undefined,
  where: { via: readonly string[]; nesting: number },
): boolean {
  if (word === undefined || word.static || !word.text.startsWith("<(")) return false;
  const { via, nesting } = where;
  const unique = (found: RegExpMatchArray | null): string[] => [...new Set(found ?? [])];
  analysis.acc.feeds.push({
    interpreter,
    from: "substitution",
    decodes: unique(word.text.match(DECODE_WORDS)),
    fromNetwork: unique(word.text.match(NETWORK_WORDS)),
  });
  const language = languageOf(interpreter) ?? "shell"; // `source` and `.` run shell code
  if (word.output !== undefined) {
    codeInto(
      analysis,
      interpreter,
      language,
      word.output,
      [...via, `${interpreter} <(…)`],
      nesting,
    );
  }
  return false;
}

/** Shells with `-c`, one-liners, and interpreters whose program is their input. */
function interpreter(
  analysis: Analysis,
  raw: RawCommand,
  run: Unwrapped,
  program: string,
  args: string[],
  nesting: number,
): boolean {
  const language: Language | undefined = languageOf(program);
  if (language === undefined) return false;
  const via = [...run.via, program];
  if (SHELLS.has(program)) {
    const shell = scanShell(run.words);
    if (shell.script !== undefined) {
      nestedScript(analysis, shell.script, [...via.slice(0, -1), `${program} -c`], nesting);
      return false;
    }
    // A script operand: a file, or `<(…)` (`bash <(curl …)`), which is a feed.
    if (shell.next < run.words.length && !shell.fromInput)
      return substitutionFeed(analysis, program, run.words[shell.next], { via: run.via, nesting });
  }
  const source = codeSource(language, args);
  if (source.code !== undefined) {
    scanInto(analysis, program, language, source.code, via, nesting);
    return false;
  }
  if (!source.readsInput) {
    return substitutionFeed(
      analysis,
      program,
      run.words.slice(1).find((w) => !w.text.startsWith("-")),
      { via: run.via, nesting },
    );
  }
  if (raw.stdin !== undefined) {
    analysis.acc.feeds.push({
      interpreter: program,
      from: raw.stdin.from,
      decodes: [],
      fromNetwork: [],
    });
    codeInto(
      analysis,
      program,
      language,
      raw.stdin.text,
      [...via.slice(0, -1), `${program} <<`],
      nesting,
    );
  } else if (raw.redirects.some((r) => r.mode === "read")) {
    analysis.acc.feeds.push({
      interpreter: program,
      from: "redirect",
      decodes: [],
      fromNetwork: [],
    });
  }
  return true;
}

/** Code for an interpreter: a shell's is parsed, another language's is scanned. */
export function codeInto(
  analysis: Analysis,
  program: string,
  language: Language,
  code: string,
  via: string[],
  nesting: number,
): void {
  if (language === "shell") analysis.script(code, via, nesting + 1);
  else scanInto(analysis, program, language, code, via, nesting);
}

function scanInto(
  analysis: Analysis,
  program: string,
  language: Language,
  code: string,
  via: string[],
  nesting: number,
): void {
  const scan = scanCode(program, language, code);
  for (const call of scan.calls) analysis.acc.addCall(call);
  if (scan.network !== undefined) analysis.acc.network.push({ program, ...scan.network });
  if (scan.deletion !== undefined) {
    const targets = scan.deletion.targets.map((t) => pathFact(t, true, analysis.paths));
    analysis.acc.deletions.push({
      program,
      recursive: scan.deletion.recursive,
      targets: targets.length > 0 ? targets : [{ path: "(code)", class: "unknown", glob: false }],
    });
  }
  for (const script of scan.scripts) analysis.script(script, [...via, "system()"], nesting + 1);
}
