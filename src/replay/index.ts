/** Replay: re-decide recorded sessions with a candidate policy set, record by record. */
export { replay, Replayer } from "./replay.js";
export { remotePolicy, type RemotePolicyOptions } from "./remote.js";
export { summarizeReplay, ReplaySummarizer, type ReplaySummary } from "./summary.js";
export {
  readExport,
  parseExportEntry,
  formatExportLine,
  type ReadExportOptions,
} from "./export.js";
export {
  readSelection,
  countSelection,
  assertSelection,
  type LogSelection,
} from "../log/selection.js";
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
export type { StreamShown } from "./stream-shown.js";
