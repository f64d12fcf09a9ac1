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
  MemorySessionFactStore,
  MAX_FACT_NAMES,
  TAINT_LABELS,
  type SessionFacts,
  type SessionFactStore,
} from "./session-facts.js";
export { cedarVersion } from "./wasm.js";
export { checkCedarEntries, type CedarEntry } from "./check.js";
