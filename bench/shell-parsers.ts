/**
 * The comparison behind the choice of shell parser (docs/facts.md, "Shell"): tree-sitter-bash
 * through web-tree-sitter (a dependency) against sh-syntax (mvdan/sh as WebAssembly, not one).
 * Run it with sh-syntax installed apart (so the project's node_modules stays as it is):
 *   (mkdir -p /tmp/shp && cd /tmp/shp && npm init -y && npm install sh-syntax@0.7.0)
 *   SH_SYNTAX=/tmp/shp/node_modules/sh-syntax/lib/index.js npx tsx bench/shell-parsers.ts
 * It prints, for each parser, how many commands of the corpus and of a list of tricky bash forms
 * parse, and the parse time per corpus command.
 */
import { readFileSync } from "node:fs";
import { loadShellParser } from "../src/facts/shell/index.js";
import { parseBash } from "../src/facts/shell/parser.js";

type ShParse = (text: string) => Promise<unknown>;

const CORPUS = JSON.parse(
  readFileSync("test/unit/facts/shell/corpus/commands.json", "utf8"),
) as string[];

/** Valid bash that parsers get wrong: brace lists, here-strings after redirections, coprocs… */
const TRICKY = [
  "{rm,-rf,/}",
  "sort > out.txt <<< 'x'",
  "cat <<EOF | sh\nrm -rf /\nEOF",
  "coproc worker { ls; }",
  "arr=(a b); echo ${arr[@]}",
  "echo $(( $(echo 1) + 2 ))",
  "[[ $a =~ ^(x|y)$ ]] && echo y",
  "echo ${x@Q}",
  "case $x in a) echo a ;& b) echo b ;; esac",
  "function f { ls; }; f",
  "ls |& cat",
  "exec {fd}>file",
  "diff <(ls a) <(ls b)",
  "echo $'\\x72m' `date` $\"hi\"",
  "a=1 b=2 env | grep -E '^(a|b)='",
  `${"$(".repeat(150)}ls${")".repeat(150)}`,
];

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function treeSitterParses(text: string): boolean {
  const tree = parseBash(text);
  try {
    return !tree.rootNode.hasError;
  } finally {
    tree.delete();
  }
}

async function shParses(parse: ShParse, text: string): Promise<boolean> {
  try {
    await parse(text);
    return true;
  } catch {
    return false;
  }
}

async function time(run: (text: string) => unknown, rounds: number): Promise<number[]> {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const command of CORPUS) {
      const t0 = performance.now();
      await run(command);
      times.push((performance.now() - t0) * 1000);
    }
  }
  return times.sort((a, b) => a - b);
}

function report(name: string, corpusOk: number, tricky: boolean[], times: number[]): void {
  const failed = TRICKY.filter((_, i) => tricky[i] !== true).map((t) =>
    JSON.stringify(t.slice(0, 40)),
  );
  console.log(
    `${name}: corpus ${corpusOk}/${CORPUS.length} parse; tricky ${TRICKY.length - failed.length}/${TRICKY.length}; parse p50 ${percentile(times, 50).toFixed(1)} µs p99 ${percentile(times, 99).toFixed(1)} µs`,
  );
  if (failed.length > 0) console.log(`  fails: ${failed.join(", ")}`);
}

await loadShellParser();
const tsTricky = TRICKY.map(treeSitterParses);
const tsCorpus = CORPUS.filter(treeSitterParses).length;
report("tree-sitter-bash", tsCorpus, tsTricky, await time((c) => parseBash(c).delete(), 20));

// SH_SYNTAX: the path of sh-syntax's lib/index.js when it is installed outside this project.
const moduleName = process.env.SH_SYNTAX ?? "sh-syntax";
const sh = (await import(moduleName).catch((error: unknown) => String(error))) as
  { parse: ShParse } | string;
if (typeof sh === "string") {
  console.log(`sh-syntax: not loaded (see the comment at the top): ${sh}`);
} else {
  const shTricky: boolean[] = [];
  for (const text of TRICKY) shTricky.push(await shParses(sh.parse, text));
  let shCorpus = 0;
  for (const command of CORPUS) if (await shParses(sh.parse, command)) shCorpus += 1;
  report("sh-syntax", shCorpus, shTricky, await time((c) => shParses(sh.parse, c), 2));
}
