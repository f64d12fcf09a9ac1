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
