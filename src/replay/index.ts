/** Replay: re-decide recorded sessions with a candidate policy set, record by record. */
export { replay, Replayer } from "./replay.js";
export { summarizeReplay, ReplaySummarizer, type ReplaySummary } from "./summary.js";
export { buildCandidates, type Candidate, type CandidateSet } from "./candidates.js";
export { diffDecisions, type DecisionDiff } from "./diff.js";
export {
  readExport,
  parseExportEntry,
  formatExportLine,
  type ReadExportOptions,
} from "./export.js";
export { readSelection, countSelection, assertSelection, type LogSelection } from "./selection.js";
export { formatResultLine, formatSummary } from "./report.js";
export { Progress, type ProgressOptions, type ProgressStream } from "./progress.js";
export type {
  FieldChange,
  ReplayCandidates,
  ReplayEntry,
  ReplayInput,
  ReplayOptions,
  ReplayResult,
  ReplayStats,
  ReplayStatus,
  ReplayedOutcome,
} from "./types.js";
