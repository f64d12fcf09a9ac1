/**
 * The corpus runner: every entry, spelt in every adapter's tool vocabulary, decided by the
 * shipped library (policies/library/registry.json, its Cedar sources inlined) through the
 * policy-test path `hookbus policy test` uses (runPolicyTests: reevaluate + merge, real Cedar).
 * Harmful entries count as stopped when blocked or held for approval; benign ones as allowed
 * only when allowed. Shell entries that name facts are also checked against the shell facts.
 */
import { fileURLToPath } from "node:url";
import { readRegistryFile } from "../../src/cli/commands/registry.js";
import { loadShellParser, shellFacts } from "../../src/facts/shell/index.js";
import { runPolicyTests, type CaseSet } from "../../src/policy-test/index.js";
import { ADAPTERS, toolCallFor, type AdapterVocabulary } from "./adapters.js";
import type { CorpusEntry } from "./corpus.js";

export const LIBRARY_REGISTRY = fileURLToPath(
  new URL("../../policies/library/registry.json", import.meta.url),
);

/** Where the corpus's agent works: relative paths resolve here, `~` to its home. */
export const CORPUS_PLACE = { home: "/home/dev", cwd: "/home/dev/project" };

export interface Miss {
  adapter: string;
  id: string;
  category: string;
  toolName: string;
  outcome: string;
}

export interface Rate {
  adapter: string;
  harmfulStopped: number;
  harmful: number;
  benignAllowed: number;
  benign: number;
}

export interface CorpusReport {
  rates: Rate[];
  overall: Rate;
  misses: { harmful: Miss[]; benign: Miss[] };
  factMisses: { id: string; missing: string[] }[];
}

const STOPPED = new Set(["block", "pending_approval"]);

function caseSet(
  adapter: AdapterVocabulary,
  entries: readonly CorpusEntry[],
  tag: string,
): CaseSet {
  return {
    file: `${tag}/${adapter.adapter}`,
    context: { agentId: "corpus", cwd: CORPUS_PLACE.cwd },
    cases: entries.map((entry, i) => ({
      name: entry.id,
      hook: "before_tool_call",
      event: { ...toolCallFor(adapter, entry.action), toolCallId: `c-${i + 1}` },
      expect: { outcome: "allow" },
    })),
  };
}

async function outcomes(
  registry: unknown,
  adapter: AdapterVocabulary,
  entries: readonly CorpusEntry[],
  tag: string,
): Promise<string[]> {
  const results = await runPolicyTests([], registry, [caseSet(adapter, entries, tag)]);
  return results.map((r) => r.decision?.outcome ?? `error ${r.error?.code ?? "?"}`);
}

function missesOf(
  adapter: AdapterVocabulary,
  entries: readonly CorpusEntry[],
  results: readonly string[],
  isMiss: (outcome: string) => boolean,
): Miss[] {
  return entries.flatMap((entry, i) =>
    isMiss(results[i]!)
      ? [
          {
            adapter: adapter.adapter,
            id: entry.id,
            category: entry.category,
            toolName: toolCallFor(adapter, entry.action).toolName,
            outcome: results[i]!,
          },
        ]
      : [],
  );
}

/** The named shell facts an entry expects that the detectors do not set. */
export function missingFacts(entry: CorpusEntry): string[] {
  if (entry.action.kind !== "shell" || entry.facts.length === 0) return [];
  const facts = shellFacts(entry.action.command, CORPUS_PLACE) as unknown as Record<
    string,
    unknown
  >;
  return entry.facts.filter((name) => {
    const value = facts[name];
    return !(value === true || (value !== undefined && value !== false && name === "unparsed"));
  });
}

export async function runCorpus(
  harmful: readonly CorpusEntry[],
  benign: readonly CorpusEntry[],
  registryPath = LIBRARY_REGISTRY,
): Promise<CorpusReport> {
  await loadShellParser();
  const registry = await readRegistryFile(registryPath);
  const rates: Rate[] = [];
  const misses: CorpusReport["misses"] = { harmful: [], benign: [] };
  for (const adapter of ADAPTERS) {
    const bad = await outcomes(registry, adapter, harmful, "harmful");
    const good = await outcomes(registry, adapter, benign, "benign");
    const harmfulMisses = missesOf(adapter, harmful, bad, (o) => !STOPPED.has(o));
    const benignMisses = missesOf(adapter, benign, good, (o) => o !== "allow");
    misses.harmful.push(...harmfulMisses);
    misses.benign.push(...benignMisses);
    rates.push({
      adapter: adapter.adapter,
      harmfulStopped: harmful.length - harmfulMisses.length,
      harmful: harmful.length,
      benignAllowed: benign.length - benignMisses.length,
      benign: benign.length,
    });
  }
  const sum = (key: keyof Omit<Rate, "adapter">) => rates.reduce((n, r) => n + r[key], 0);
  const overall: Rate = {
    adapter: "overall",
    harmfulStopped: sum("harmfulStopped"),
    harmful: sum("harmful"),
    benignAllowed: sum("benignAllowed"),
    benign: sum("benign"),
  };
  const factMisses = harmful
    .map((entry) => ({ id: entry.id, missing: missingFacts(entry) }))
    .filter((m) => m.missing.length > 0);
  return { rates, overall, misses, factMisses };
}

const percent = (n: number, of: number) => (of === 0 ? "-" : ((100 * n) / of).toFixed(1));

export function rateLine(rate: Rate): string {
  return (
    `corpus: harmful_stopped=${rate.harmfulStopped}/${rate.harmful} (${percent(rate.harmfulStopped, rate.harmful)} %) ` +
    `benign_allowed=${rate.benignAllowed}/${rate.benign} (${percent(rate.benignAllowed, rate.benign)} %)`
  );
}

/** The report as text: one line per adapter, the overall line, then every miss grouped by entry. */
export function formatCorpusReport(report: CorpusReport): string {
  const lines = report.rates.map((r) => `${rateLine(r)} adapter=${r.adapter}`);
  lines.push(`${rateLine(report.overall)} adapter=overall`);
  const grouped = (misses: readonly Miss[]) => {
    const byId = new Map<string, Miss[]>();
    for (const m of misses) byId.set(m.id, [...(byId.get(m.id) ?? []), m]);
    return [...byId.values()].map(
      (ms) =>
        `  ${ms[0]!.id} [${ms[0]!.category}] ${ms.length}/${ADAPTERS.length} adapters: ` +
        ms.map((m) => `${m.adapter}=${m.outcome}`).join(" "),
    );
  };
  lines.push(
    `harmful not stopped (${report.misses.harmful.length}):`,
    ...grouped(report.misses.harmful),
  );
  lines.push(
    `benign not allowed (${report.misses.benign.length}):`,
    ...grouped(report.misses.benign),
  );
  lines.push(
    `shell facts missing (${report.factMisses.length}):`,
    ...report.factMisses.map((m) => `  ${m.id}: ${m.missing.join(", ")}`),
  );
  return lines.join("\n");
}
