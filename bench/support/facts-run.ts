/**
 * The cost of shell facts (issue 30 item 8): every command of the corpus many times (the typical
 * cost), and pathological commands of 64 KB and at the length limit (the worst cost). Timed one
 * call at a time with performance.now(), after a warm-up, in this process.
 *
 * "Typical" is the corpus in test/unit/facts/shell/corpus/commands.json, each command weighted
 * the same: everyday developer commands and the attack spellings policies must catch, as agents
 * write them. Every call computes the facts afresh (`shellFacts`, no memo); what a repeat costs
 * through `createShellFactsMemo` is measured apart and is not in the `facts:` line.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  createShellFactsMemo,
  DEFAULT_SHELL_LIMITS,
  loadShellParser,
  shellFacts,
} from "../../src/facts/shell/index.js";
import { countTokens } from "../../src/facts/shell/limits.js";
import { plainCommands } from "../../src/facts/shell/plain.js";

export interface FactsCost {
  commands: number;
  samples: number;
  p50Us: number;
  p99Us: number;
  /** The slowest pathological command, in milliseconds. */
  maxMs: number;
  /** Process CPU time per corpus command (user + system), µs: what a busy machine does not inflate. */
  cpuUsPerCall: number;
  /** Corpus commands that take the parser-free path (src/facts/shell/plain.ts). */
  plainCommands: number;
  /** p50 of a repeated corpus command through createShellFactsMemo, µs. */
  memoP50Us: number;
  /**
   * Each pathological shape: its length, its wall time and CPU time (the best of 5), and whether it
   * was parsed or refused.
   */
  pathological: { name: string; length: number; ms: number; cpuMs: number; unparsed?: string }[];
}

const CORPUS = "test/unit/facts/shell/corpus/commands.json";

type Shape = (repeat: number, word: string) => string;

/** Shapes that make parsers slow: long words, many tokens, deep nesting, many stages. */
const SHAPES: Record<string, Shape> = {
  word: (n, w) => `echo ${w.repeat(n)}`,
  args: (n, w) => `echo ${`${w} `.repeat(n)}`,
  pipes: (n, w) => `${`${w} | `.repeat(n)}b`,
  chain: (n, w) => `${`${w} && `.repeat(n)}b`,
  substitutions: (n, w) => `echo ${`$(${w})`.repeat(n)}`,
  nesting: (n, w) => `${"$(".repeat(n)}${w}${")".repeat(n)}`,
  "double-quoted": (n, w) => `echo "${`${w} $b `.repeat(n)}"`,
  "single-quoted": (n, w) => `echo '${`${w} `.repeat(n)}'`,
  heredoc: (n, w) => `cat <<EOF\n${`${w} $x\n`.repeat(n)}EOF`,
  unterminated: (n, w) => `echo "${w.repeat(n)}`,
};

/**
 * Each shape at `size` characters: with `underLimits`, as many repeats as the token limit lets
 * through and words as long as the length limit lets (the worst a command can cost and still be
 * parsed); without, simply filled to `size` (64 KB: refused by the length limit).
 */
export function pathologicalCommands(size: number, underLimits: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, shape] of Object.entries(SHAPES)) {
    if (!underLimits) {
      out[name] = shape(Math.ceil(size / 4), "abcd").slice(0, size);
      continue;
    }
    let n = DEFAULT_SHELL_LIMITS.maxTokens;
    while (n > 1 && countTokens(shape(n, "a"), Infinity) > DEFAULT_SHELL_LIMITS.maxTokens) n -= 1;
    const wordLength = Math.max(1, Math.floor((size - shape(n, "").length) / n));
    out[name] = shape(n, "a".repeat(wordLength)).slice(0, size);
  }
  return out;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const where = { home: "/home/dev", cwd: "/home/dev/app" };

export async function measureShellFacts(rounds = 20): Promise<FactsCost> {
  await loadShellParser();
  const corpus = JSON.parse(readFileSync(resolve(CORPUS), "utf8")) as string[];
  for (let warm = 0; warm < 3; warm++) for (const command of corpus) shellFacts(command, where);
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let round = 0; round < rounds; round++) {
    for (const command of corpus) {
      const t0 = performance.now();
      shellFacts(command, where);
      times.push((performance.now() - t0) * 1000);
    }
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  const memo = createShellFactsMemo();
  for (const command of corpus) memo(command, where);
  const memoTimes: number[] = [];
  for (const command of corpus) {
    const t0 = performance.now();
    memo(command, where);
    memoTimes.push((performance.now() - t0) * 1000);
  }
  memoTimes.sort((a, b) => a - b);
  const pathological: FactsCost["pathological"] = [];
  const sets = [
    pathologicalCommands(65_536, false),
    pathologicalCommands(DEFAULT_SHELL_LIMITS.maxLength, true),
  ];
  for (const set of sets) {
    for (const [name, command] of Object.entries(set)) {
      let best = Infinity;
      let bestCpu = Infinity;
      let unparsed: string | undefined;
      for (let i = 0; i < 5; i++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        unparsed = shellFacts(command, where).unparsed?.reason;
        best = Math.min(best, performance.now() - t0);
        const used = process.cpuUsage(c0);
        bestCpu = Math.min(bestCpu, (used.user + used.system) / 1000);
      }
      const row = { name, length: command.length, ms: best, cpuMs: bestCpu };
      pathological.push({ ...row, ...(unparsed && { unparsed }) });
    }
  }
  return {
    commands: corpus.length,
    samples: times.length,
    p50Us: percentile(times, 50),
    p99Us: percentile(times, 99),
    maxMs: Math.max(...pathological.map((p) => p.ms)),
    cpuUsPerCall: (cpu.user + cpu.system) / times.length,
    plainCommands: corpus.filter((c) => plainCommands(c, [], where.home, DEFAULT_SHELL_LIMITS))
      .length,
    memoP50Us: percentile(memoTimes, 50),
    pathological,
  };
}

/** The bench line: `facts: p50_us=… p99_us=… max_ms=…`. */
export function factsLine(cost: FactsCost): string {
  return `facts: p50_us=${cost.p50Us.toFixed(1)} p99_us=${cost.p99Us.toFixed(1)} max_ms=${cost.maxMs.toFixed(2)}`;
}
