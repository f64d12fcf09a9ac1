/** Cedar policies evaluated in-process (docs/cedar.md). */
export { parseCedarPolicySet, type CedarPolicySet, type CedarPolicyInfo } from "./policy-set.js";
export { evaluateCedar, type CedarEvaluation } from "./evaluate.js";
export {
  cedarRequests,
  type CedarRequest,
  type RequestInput,
  type RequestTarget,
} from "./request.js";
export { cedarSchema, cedarTypeIssues, assertCedarTypes } from "./validate.js";
export {
  emptySessionFacts,
  afterToolCall,
  afterToolOutput,
  afterDecision,
  afterApproval,
  MemorySessionFactStore,
  MAX_FACT_NAMES,
  TAINT_LABELS,
  type SessionFacts,
  type SessionFactStore,
  type DecidedCall,
} from "./session-facts.js";
export { decidedCallOf, type CallToLearn } from "./session-learn.js";
export {
  recentCounts,
  WINDOWS,
  BUCKET_MS,
  WINDOW_BUCKETS,
  type WindowBucket,
  type RecentCounts,
} from "./session-windows.js";
export { cedarVersion } from "./wasm.js";
export { checkCedarEntries, type CedarEntry } from "./check.js";
