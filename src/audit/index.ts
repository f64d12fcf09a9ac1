/** Audit queries over the log: bounded queries, session timelines, tails (and how to print them). */
export {
  AUDIT_OUTCOMES,
  UNKNOWN_HOOK,
  checkAuditFilter,
  isAuditOutcome,
  matchesClientSide,
  subjectFilter,
  type AuditFilter,
  type AuditOutcome,
} from "./filter.js";
export {
  queryLog,
  tailLog,
  type AuditEntry,
  type AuditQuery,
  type AuditStats,
  type QueryOptions,
  type TailOptions,
} from "./query.js";
export {
  sessionTimeline,
  toTimelineEntry,
  summarizeDecision,
  summarizeOutcome,
  summarizeRecord,
  summarizeVerdict,
  recordLatencyMs,
  type DecisionStep,
  type ErrorStep,
  type LateStep,
  type ObservationStep,
  type PolicyStep,
  type TimelineEntry,
  type TimelineOptions,
} from "./timeline.js";
export { parseAuditTime, parseDuration } from "./time.js";
export {
  formatTimeline,
  printable,
  queryRow,
  QUERY_COLUMNS,
  TableWriter,
  type Column,
} from "./format.js";
