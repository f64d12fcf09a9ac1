/**
 * hookbus/audit: query the log, a session's timeline, follow new records (docs/audit.md); verify
 * it was not tampered with and write anchors (docs/tamper-evidence.md); what redaction hides
 * (docs/redaction.md).
 */
export { AUDIT_OUTCOMES, checkAuditFilter, type AuditFilter, type AuditOutcome } from "./filter.js";
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
  type DecisionStep,
  type ErrorStep,
  type LateStep,
  type ObservationStep,
  type PolicyStep,
  type TimelineEntry,
  type TimelineOptions,
} from "./timeline.js";
export {
  openAuditSource,
  withAuditSource,
  type AuditSourceOptions,
  type LogConnection,
} from "./source.js";
export type {
  AuditCall,
  AuditReadOptions,
  AuditSource,
  AuditSourceKind,
  AuditTailOptions,
} from "./audit-source.js";
export { LogAuditSource } from "./log-source.js";
export { IndexAuditSource } from "./pg/index-source.js";
export { parseAuditTime, parseDuration } from "./time.js";
export { formatTimeline } from "./format.js";
export {
  verifyLog,
  formatVerifyReport,
  type VerifyOptions,
  type VerifyReport,
  type VerifyFinding,
  type FindingKind,
} from "./verify.js";
export { makeAnchor, readAnchor, AnchorStatement, type AnchorFile } from "./anchor.js";
export { parseTrustedKeys } from "../log/sign/keys.js";
export type { RecordSignatureStats } from "./verify-analyse.js";
export type { CrashTail } from "./verify-crash-tail.js";
export {
  redactRecord,
  hashValue,
  RedactionRule,
  REDACTION_MASK,
  type RedactionRuleInput,
} from "../log/redaction.js";
