/**
 * What a feature (signing, encryption) adds to a call's Node CPU, from decision paths running in
 * this one process: rounds of the same concurrent load on each side, the order rotating each
 * round. A plain path started FIRST and another started LAST bracket the candidates, because a
 * path's place costs by itself (measured in bench/privacy.ts: two plain paths read +12 % for the
 * one started second). Each round's figure is candidate / mean(plain, plain again) − 1; the
 * median of the rounds is the result, and `aaPct` (plain again / plain − 1) is the noise floor of
 * the same run. Used by `npm run bench` (signing and encryption) and `npm run bench:privacy`.
 */
import { CostMeter } from "./cost.js";
import { concurrent } from "./decision-path.js";

export type Call = (lane: number) => Promise<unknown>;

/** The load each side gets in a round. */
export interface LoadShape {
  /** Calls per side per round. */
  calls: number;
  concurrency: number;
}

export interface BracketedOptions<K extends string> extends LoadShape {
  /** The plain path started before every candidate. */
  plain: Call;
  /** Candidates, in the order their paths were started. */
  candidates: Record<K, Call>;
  /** A plain path started after every candidate. */
  plainAgain: Call;
  rounds: number;
}

export interface CandidateCost {
  /** Mean Node CPU per call of the candidate (µs). */
  us: number;
  /** Each round's candidate / mean(plain, plain again) − 1, in %. */
  pcts: number[];
  medianPct: number;
}

export interface BracketedCost<K extends string> {
  /** Mean Node CPU per call of the two plain paths (µs). */
  plainUs: number;
  /** Each round's plain again / plain − 1, in %: what two identical paths differ by. */
  aaPcts: number[];
  aaPct: number;
  candidates: Record<K, CandidateCost>;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length / 2;
  return s.length % 2 === 1 ? s[Math.floor(mid)]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** One round: every side once, the first one `at` places along; CPU µs per call by side. */
async function round(sides: readonly Call[], at: number, load: LoadShape): Promise<number[]> {
  const perCall = new Array<number>(sides.length);
  for (let i = 0; i < sides.length; i++) {
    const side = (at + i) % sides.length;
    const meter = new CostMeter();
    await meter.measure(load.calls, () => concurrent(sides[side]!, load.calls, load.concurrency));
    perCall[side] = meter.perCall().cpuUs;
  }
  return perCall;
}

export async function bracketedCost<K extends string>(
  options: BracketedOptions<K>,
): Promise<BracketedCost<K>> {
  const names = Object.keys(options.candidates) as K[];
  // Side 0 is the plain path, the last side the plain path again, the candidates in between.
  const sides = [
    options.plain,
    ...names.map((name) => options.candidates[name]),
    options.plainAgain,
  ];
  const last = sides.length - 1;
  const us = sides.map(() => 0);
  const pcts = names.map((): number[] => []);
  const aaPcts: number[] = [];
  for (let r = 0; r < options.rounds; r++) {
    const perCall = await round(sides, r, options);
    perCall.forEach((cpuUs, side) => (us[side]! += cpuUs / options.rounds));
    const plain = (perCall[0]! + perCall[last]!) / 2;
    aaPcts.push((perCall[last]! / perCall[0]! - 1) * 100);
    names.forEach((_, i) => pcts[i]!.push((perCall[i + 1]! / plain - 1) * 100));
  }
  const candidates = {} as Record<K, CandidateCost>;
  names.forEach((name, i) => {
    candidates[name] = { us: us[i + 1]!, pcts: pcts[i]!, medianPct: median(pcts[i]!) };
  });
  return { plainUs: (us[0]! + us[last]!) / 2, aaPcts, aaPct: median(aaPcts), candidates };
}

/** "+6.5 % (rounds: 3.1, 9.0, …)" */
export function describePct(pct: number, rounds: readonly number[]): string {
  const f = (n: number) => n.toFixed(1);
  return `${pct >= 0 ? "+" : ""}${f(pct)} % (rounds: ${rounds.map(f).join(", ")})`;
}
