/** The conformance kit for policy workers in any language (docs/conformance.md). */
export {
  runConformance,
  ALL_CASES,
  type ConformanceOptions,
  type ConformanceReport,
  type CaseResult,
} from "./run.js";
export { formatReport } from "./format.js";
