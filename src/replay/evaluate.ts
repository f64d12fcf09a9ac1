/**
 * Re-deciding one recorded call in process: every candidate policy of the hook through
 * `invokePolicy` (what a worker runs per request), then `mergeOutcomes` (what the coordinator
 * runs), so a replayed decision is made by the same code as a live one, minus the network.
 */
import type { Logger } from "pino";
import type { HookEvent, ModifyingHookName } from "../catalog/catalog.js";
import { outcomesWithoutLatency } from "../log/decision-record.js";
import type { DecisionRecord } from "../log/record.js";
import { mergeOutcomes, type MergeResult } from "../merge/merge.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import { parseContext, parseEvent } from "../catalog/validate.js";
import { invokePolicyNow, type InvokeOptions, type InvokeResult } from "../policy/invoke.js";
import type { SessionStateStore } from "../policy/state/session-state.js";
import type { CallFacts } from "../policy/call-facts.js";
import type { Candidate } from "./candidates.js";
import type { ReplayedOutcome } from "./types.js";
import { isPromise, type MaybePromise } from "../foundation/hot-path.js";

/** What deciding a call needs of a record (a policy test builds the same from a fixture). */
export type CallToDecide = Pick<DecisionRecord, "hook" | "event" | "context" | "callId">;

export interface Reevaluation {
  result: MergeResult<ModifyingHookName>;
  outcomes: ReplayedOutcome[];
}

/** A candidate's answer: at once when its handler answers synchronously, else a promise. */
function ask(
  candidate: Candidate,
  record: CallToDecide,
  state: SessionStateStore,
  logger: Logger | undefined,
  inputValidated: boolean,
  facts: CallFacts | undefined,
): MaybePromise<PolicyOutcomeInput> {
  const options: InvokeOptions = { callId: record.callId, state, inputValidated, facts };
  if (logger !== undefined) options.logger = logger;
  const answer = invokePolicyNow(
    candidate.policy,
    record.hook as ModifyingHookName,
    record.event,
    record.context,
    options,
  );
  return isPromise(answer)
    ? answer.then((settled) => outcomeOf(candidate, settled))
    : outcomeOf(candidate, answer);
}

function outcomeOf(
  { entry, policy }: Candidate,
  answer: InvokeResult<ModifyingHookName>,
): PolicyOutcomeInput {
  // The same outcome the coordinator builds from a worker's reply (src/coordinator/policy-asker.ts),
  // filled in field by field, per policy and replayed record (hot path: foundation/hot-path.ts).
  const outcome: PolicyOutcomeInput = {
    policy: entry.name,
    priority: entry.priority,
    mode: entry.mode,
    status: answer.status,
    latencyMs: answer.latencyMs,
  };
  if (policy.version !== undefined) outcome.version = policy.version;
  if (entry.failMode !== undefined) outcome.failMode = entry.failMode;
  if (answer.verdict !== undefined) outcome.verdict = answer.verdict;
  if (answer.error !== undefined) outcome.error = answer.error;
  return outcome;
}

export async function reevaluate(
  record: CallToDecide,
  candidates: readonly Candidate[],
  state: SessionStateStore,
  logger?: Logger,
  facts?: CallFacts,
): Promise<Reevaluation> {
  return reevaluateNow(record, candidates, state, logger, facts);
}

/**
 * As `reevaluate`, without a promise when every policy of the hook answers synchronously (replay
 * re-decides records back to back, and most policies never wait for anything).
 */
export function reevaluateNow(
  record: CallToDecide,
  candidates: readonly Candidate[],
  state: SessionStateStore,
  logger?: Logger,
  /** The call's facts (CandidateSet.factsOf), handed to every policy as `tools.facts`. */
  facts?: CallFacts,
): MaybePromise<Reevaluation> {
  // Policies of one call run concurrently, as they do live: every handler is started, in merge
  // order, before any is awaited; each has its own state, so the order in which they finish
  // cannot change what they decide.
  // The input is validated once for every policy; when it is invalid, each policy is handed it
  // unvalidated so that each reports the refusal under its own name, as each worker would.
  const valid = validInput(record);
  const raw: MaybePromise<PolicyOutcomeInput>[] = [];
  let waiting = false;
  for (const candidate of candidates) {
    const outcome = ask(candidate, record, state, logger, valid, facts);
    if (isPromise(outcome)) waiting = true;
    raw.push(outcome);
  }
  if (waiting) {
    return Promise.all(raw.map((outcome) => Promise.resolve(outcome))).then((settled) =>
      merged(record, settled),
    );
  }
  return merged(record, raw as PolicyOutcomeInput[]);
}

function merged(record: CallToDecide, raw: PolicyOutcomeInput[]): Reevaluation {
  const result = mergeOutcomes(
    record.hook as ModifyingHookName,
    record.event as HookEvent<ModifyingHookName>,
    raw,
    // Built just above from the parsed registry and invokePolicy's validated answers.
    { ownOutcomes: true, ownVerdicts: true },
  );
  const outcomes = outcomesWithoutLatency(result, raw);
  return { result, outcomes };
}

function validInput(record: CallToDecide): boolean {
  try {
    parseEvent(record.hook as ModifyingHookName, record.event);
    parseContext(record.hook as ModifyingHookName, record.context);
    return true;
  } catch {
    return false; // each policy refuses it on its own (see reevaluate)
  }
}
