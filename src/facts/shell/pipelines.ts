/**
 * Pipelines into interpreters: `curl … | sh`, `echo … | base64 -d | bash`, `cat <<EOF | python3`.
 * Each interpreter stage that reads its program from input becomes a feed, with the decode steps
 * and network programs before it. When the stages before it print a fixed text, that text is the
 * program, and it is analysed like any nested script.
 */
import type { RawCommand } from "./collect.js";
import type { Analysis, Final } from "./context.js";
import { decodeStep, languageOf } from "./interpreters.js";
import { codeInto } from "./invocation.js";
import { pathFact } from "./paths.js";
import { staticOutput, type StaticStage } from "./static-eval.js";

function stagesOf(raws: readonly RawCommand[]): Map<number, RawCommand[]> {
  const pipelines = new Map<number, RawCommand[]>();
  for (const raw of raws) {
    if (raw.pipeline === undefined) continue;
    const list = pipelines.get(raw.pipeline.id) ?? [];
    list.push(raw);
    pipelines.set(raw.pipeline.id, list);
  }
  return pipelines;
}

function feed(
  analysis: Analysis,
  stages: RawCommand[],
  index: number,
  finals: ReadonlyMap<RawCommand, Final>,
  nesting: number,
): void {
  const target = stages[index];
  const final = target && finals.get(target);
  if (target === undefined || final?.readsInput !== true) return;
  const stage = target.pipeline?.stage ?? 0;
  const before = stages.filter((s) => (s.pipeline?.stage ?? 0) < stage);
  const finalsBefore = before.flatMap((s) => finals.get(s) ?? []);
  const decodes = finalsBefore.flatMap((f) => decodeStep(f.program, f.args) ?? []);
  const fromNetwork = finalsBefore.filter((f) => f.network).map((f) => f.program);
  analysis.acc.feeds.push({ interpreter: final.program, from: "pipe", decodes, fromNetwork });
  const language = languageOf(final.program);
  const staticStages: StaticStage[] = before.map((s) => ({
    argv: s.words.every((w) => w.static) ? s.words.map((w) => w.text) : ["?"],
    ...(s.stdin && { stdin: s.stdin.text }),
  }));
  const text = staticOutput(staticStages, analysis.limits.maxLength);
  if (text === undefined || language === undefined) return;
  const via = [...target.via, ...decodes, `| ${final.program}`];
  codeInto(analysis, final.program, language, text, via, nesting);
}

/**
 * `ls / | xargs rm -rf`: the deletion's operands are what the stages before it print, when the
 * text says what that is. Its unknown `(input)` target becomes those paths.
 */
function inputDeletions(
  analysis: Analysis,
  stages: RawCommand[],
  finals: ReadonlyMap<RawCommand, Final>,
): void {
  for (const target of stages) {
    const index = finals.get(target)?.inputDeletion;
    const deletion = index === undefined ? undefined : analysis.acc.deletions[index];
    if (deletion === undefined) continue;
    const stage = target.pipeline?.stage ?? 0;
    const before = stages.filter((s) => (s.pipeline?.stage ?? 0) === stage - 1);
    const printed = before.flatMap((s) => finals.get(s)?.prints ?? []);
    if (before.length === 1 && printed.length > 0) {
      deletion.targets = [...deletion.targets.filter((t) => t.path !== "(input)"), ...printed];
      // find prints every entry under its start paths: deleting them all deletes the tree.
      if (before.some((s) => finals.get(s)?.program === "find")) deletion.recursive = true;
    }
  }
}

/** Feeds of every pipeline of one script. */
export function feedsOfPipelines(
  analysis: Analysis,
  raws: readonly RawCommand[],
  finals: ReadonlyMap<RawCommand, Final>,
  nesting: number,
): void {
  for (const stages of stagesOf(raws).values()) {
    inputDeletions(analysis, stages, finals);
    for (let i = 0; i < stages.length; i++) {
      if ((stages[i]?.pipeline?.stage ?? 0) > 0) feed(analysis, stages, i, finals, nesting);
    }
  }
}

/** Programs that bring data in from the network, by name (their output is not the agent's). */
const FETCHERS = new Set(["curl", "wget", "fetch", "aria2c", "scp", "rsync", "sftp", "ftp", "nc"]);

/** The file a download writes: `curl -o f`, `--output f`, `wget -O f`, or wget's URL basename. */
function downloadedFile(argv: readonly string[]): string | undefined {
  const [program, ...args] = argv;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    const long = /^--(?:output|output-document)=(.+)$/u.exec(arg);
    if (long !== null) return long[1];
    if (/^--(?:output|output-document)$/u.test(arg)) return args[i + 1];
    const short = program === "wget" ? /^-[A-Za-z]*O(.*)$/u : /^-[A-Za-z]*o(.*)$/u;
    const match = short.exec(arg);
    if (match !== null) return match[1] !== "" ? match[1] : args[i + 1];
  }
  if (program !== "wget") return undefined;
  const url = args.find((a) => /^[a-z]+:\/\//iu.test(a));
  const name = url
    ?.replace(/[?#].*$/u, "")
    .split("/")
    .at(-1);
  return name === undefined || name === "" ? undefined : name;
}

interface Written {
  decodes: string[];
  fromNetwork: string[];
}

function writtenFiles(analysis: Analysis): Map<string, Written> {
  const { acc, paths } = analysis;
  const written = new Map<string, Written>();
  const put = (text: string, from: string): void => {
    const path = pathFact(text, true, paths).path;
    const entry = written.get(path) ?? { decodes: [], fromNetwork: [] };
    if (FETCHERS.has(from)) entry.fromNetwork.push(from);
    else entry.decodes.push(from);
    written.set(path, entry);
  };
  const writes = (program: string): boolean =>
    FETCHERS.has(program) || decodeStep(program, ["-d"]) !== undefined;
  for (const r of acc.redirects) {
    if (r.mode !== "write" && r.mode !== "append") continue;
    // `a | b > f` can hang the redirect on the whole pipeline (`{…}`): any writer in it counts.
    const writers = r.program === "{…}" ? [...acc.programs].filter(writes) : [r.program];
    for (const writer of writers.filter(writes)) put(r.target.path, writer);
  }
  for (const c of acc.commands) {
    const file = FETCHERS.has(c.program) ? downloadedFile(c.argv) : undefined;
    if (file !== undefined && file !== "-") put(file, c.program);
  }
  return written;
}

/**
 * Download or decode to a file, then run it in the same command: `curl -o x.sh URL && sh x.sh`,
 * `echo … | base64 -d > x; bash x`, `wget URL/p && chmod +x p && ./p`. The file run (as the
 * program, or as an interpreter's script operand) is a feed from that file (`from: "redirect"`),
 * with the network programs and decoders that wrote it.
 */
export function feedsOfWrittenFiles(analysis: Analysis): void {
  const written = writtenFiles(analysis);
  if (written.size === 0) return;
  const { acc, paths } = analysis;
  for (const c of acc.commands) {
    const programPath = c.argv[0]?.includes("/") === true ? [pathFact(c.argv[0], true, paths)] : [];
    const operands = languageOf(c.program) !== undefined ? c.operands : [];
    const runs = operands.map((op) => pathFact(op, true, paths));
    const source = [...programPath, ...runs].map((p) => written.get(p.path)).find(Boolean);
    if (source === undefined) continue;
    acc.feeds.push({
      interpreter: c.program,
      from: "redirect",
      decodes: [...new Set(source.decodes)],
      fromNetwork: [...new Set(source.fromNetwork)],
    });
  }
}
