/**
 * Running policy test cases in process: each case gets a fresh session state, its history runs
 * first (modifying calls through `reevaluate`, observations through the policies' observational
 * handlers, as replay does), then its call is decided by `invokePolicy` + `mergeOutcomes` (the
 * code replay and the coordinator use) and compared with what the case expects.
 */
import { isDeepStrictEqual } from "node:util";
import {
  isModifyingHook,
  type Decision,
  type ModifyingHookName,
  type ObservationalHookName,
} from "../catalog/catalog.js";
import { parseContext, parseEvent } from "../catalog/validate.js";
import { isHookbusError } from "../foundation/errors.js";
import { buildCandidates, type CandidateSet } from "../replay/candidates.js";
import { reevaluate } from "../replay/evaluate.js";
import { invokePolicy } from "../policy/invoke.js";
import { loadCallFacts } from "../policy/call-facts.js";
import type { Policy } from "../policy/policy.js";
import { MemorySessionStateStore } from "../policy/state/memory-store.js";
import type { FixtureCase } from "./fixture.js";

export interface Mismatch {
  field: string;
  expected: unknown;
  actual: unknown;
}

export interface CaseResult {
  file: string;
  name: string;
  hook: string;
  status: "pass" | "fail" | "error";
  /** The decision the candidate set made (absent on error). */
  decision?: Decision<ModifyingHookName>;
  mismatches: Mismatch[];
  /** Why the case could not run (bad event, history step failed, ...). */
  error?: { code: string; message: string };
}

export interface CaseSet {
  file: string;
  /** Applies to every case; a case's own context is merged over it. */
  context: Record<string, unknown>;
  cases: readonly FixtureCase[];
}

/** Every modifying hook's context needs these; a fixture may leave them out. */
function defaultContext(index: number): Record<string, unknown> {
  return { agentId: "policy-test", sessionKey: `case-${index + 1}`, runId: "run-1" };
}

function compare(expect: FixtureCase["expect"], decision: Decision<ModifyingHookName>): Mismatch[] {
  const actual = decision as Record<string, unknown>;
  const mismatches: Mismatch[] = [];
  for (const [field, expected] of Object.entries(expect)) {
    if (field === "blockReasonIncludes") {
      const reason = actual.blockReason;
      if (typeof reason !== "string" || !reason.includes(expected as string))
        mismatches.push({ field, expected, actual: reason });
    } else if (!isDeepStrictEqual(JSON.parse(JSON.stringify(actual[field] ?? null)), expected)) {
      mismatches.push({ field, expected, actual: actual[field] });
    }
  }
  return mismatches;
}

async function runStep(
  candidates: CandidateSet,
  state: MemorySessionStateStore,
  hook: string,
  rawContext: Record<string, unknown>,
  rawEvent: Record<string, unknown>,
  callId: string,
): Promise<Decision<ModifyingHookName> | undefined> {
  const context = parseContext(hook as ModifyingHookName, rawContext) as Record<string, unknown>;
  const event = parseEvent(hook as ModifyingHookName, rawEvent) as Record<string, unknown>;
  if (isModifyingHook(hook)) {
    const call = { hook, event, context, callId };
    const { result } = await reevaluate(
      call,
      candidates.forHook(hook),
      state,
      undefined,
      candidates.factsOf({ hook, event, context }),
    );
    // The session learns from the merged decision, as a coordinator does (docs/cedar.md).
    await candidates.session.decided(call, result.decision);
    return result.decision;
  }
  for (const policy of candidates.observers(hook as ObservationalHookName)) {
    await invokePolicy(policy, hook as ObservationalHookName, event, context, { callId, state });
  }
  await candidates.session.observed({ hook, event, context });
  return undefined;
}

async function runCase(
  candidates: CandidateSet,
  set: CaseSet,
  testCase: FixtureCase,
  index: number,
): Promise<CaseResult> {
  const base = { file: set.file, name: testCase.name, hook: testCase.hook };
  const context = { ...defaultContext(index), ...set.context, ...testCase.context };
  const state = new MemorySessionStateStore();
  // Every step of a case at one instant: its history falls within every session window.
  candidates.session.reset();
  try {
    if (!isModifyingHook(testCase.hook)) {
      return {
        ...base,
        status: "error",
        mismatches: [],
        error: {
          code: "HOOKBUS_INVALID_FIXTURE",
          message: `${testCase.hook} is observational: it has no decision to expect (put it in history)`,
        },
      };
    }
    for (const [i, step] of (testCase.history ?? []).entries()) {
      try {
        await runStep(
          candidates,
          state,
          step.hook,
          { ...context, ...step.context },
          step.event,
          `history-${i + 1}`,
        );
      } catch (error) {
        if (isHookbusError(error)) error.message = `history.${i}: ${error.message}`;
        throw error;
      }
    }
    const decision = (await runStep(
      candidates,
      state,
      testCase.hook,
      context,
      testCase.event,
      "case",
    ))!;
    const mismatches = compare(testCase.expect, decision);
    return { ...base, status: mismatches.length === 0 ? "pass" : "fail", decision, mismatches };
  } catch (error) {
    const coded = isHookbusError(error)
      ? { code: error.code, message: error.message }
      : { code: "HOOKBUS_INTERNAL", message: String((error as Error)?.message ?? error) };
    return { ...base, status: "error", mismatches: [], error: coded };
  }
}

/** Run every case of every set against one candidate set (policy modules + registry document). */
export async function runPolicyTests(
  policies: readonly Policy[],
  registry: unknown,
  sets: readonly CaseSet[],
): Promise<CaseResult[]> {
  const candidates = buildCandidates(policies, registry);
  await loadCallFacts(); // every call's facts parse its shell commands, as live
  const results: CaseResult[] = [];
  for (const set of sets) {
    for (const [index, testCase] of set.cases.entries()) {
      results.push(await runCase(candidates, set, testCase, index));
    }
  }
  return results;
}
