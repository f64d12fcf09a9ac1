/** `runConformance`: the private setup, the worker under test, every case, one result per case. */
import { answering, BASIC_CASES, type Case } from "./cases.js";
import { DISCOVERY_CASES } from "./discovery.js";
import { CaseFailure } from "./expect.js";
import { HOSTILE_CASES } from "./hostile.js";
import { LIFECYCLE_CASES } from "./lifecycle.js";
import { startSetup } from "./setup.js";

export interface ConformanceOptions {
  /** The policy the worker serves (the conformance policy of docs/conformance.md). */
  policy: string;
  /** The command that starts one worker instance; it gets NATS_URL and HOOKBUS_NAMESPACE. */
  command: readonly string[];
  /** Only cases whose name contains this. */
  only?: string;
  /** Called after each case (progress). */
  onResult?: (result: CaseResult) => void;
}

export interface CaseResult {
  name: string;
  ok: boolean;
  /** The first difference (failures only). */
  difference?: string;
  ms: number;
}

export interface ConformanceReport {
  policy: string;
  passed: number;
  failed: number;
  cases: CaseResult[];
  /** The end of the worker's output when a case failed, for the reader. */
  workerOutput?: string;
}

export const ALL_CASES: readonly Case[] = [
  ...BASIC_CASES,
  ...HOSTILE_CASES,
  ...DISCOVERY_CASES,
  ...LIFECYCLE_CASES,
];

export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const setup = await startSetup(options.policy, options.command);
  const cases: CaseResult[] = [];
  try {
    const first = setup.startWorker();
    const started = performance.now();
    const startResult = await answering(setup, 30_000).then(
      () => undefined,
      (error: unknown) => String((error as Error).message ?? error),
    );
    cases.push(result("worker starts and answers", startResult, started, options));
    if (startResult === undefined) {
      for (const testCase of ALL_CASES) {
        if (options.only !== undefined && !testCase.name.includes(options.only)) continue;
        const at = performance.now();
        let difference: string | undefined;
        try {
          await testCase.run(setup);
        } catch (error) {
          difference = error instanceof CaseFailure ? error.message : `kit error: ${String(error)}`;
        }
        cases.push(result(testCase.name, difference, at, options));
      }
    }
    const failed = cases.filter((c) => !c.ok).length;
    return {
      policy: options.policy,
      passed: cases.length - failed,
      failed,
      cases,
      ...(failed > 0
        ? { workerOutput: (setup.workers.at(-1) ?? first).output().slice(-4000) }
        : {}),
    };
  } finally {
    await setup.stop();
  }
}

function result(
  name: string,
  difference: string | undefined,
  startedAt: number,
  options: ConformanceOptions,
): CaseResult {
  const ms = Math.round(performance.now() - startedAt);
  const done: CaseResult =
    difference === undefined ? { name, ok: true, ms } : { name, ok: false, difference, ms };
  options.onResult?.(done);
  return done;
}
