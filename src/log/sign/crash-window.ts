/**
 * The crash window of a coordinator run (docs/security.md, "Crash tails"), one rule for both
 * judges of signed records: `audit verify` (src/audit/verify-crash-tail.ts) and the sealer's early
 * warning (src/sealer/signature-check.ts). A record no batch lists is in its run's crash tail only
 * when the run has a batch, none marked `last`, signed nothing after it, and the server stored it
 * between `beforeMs` before and `afterMs` after the run's last batch (heartbeats bound the gap).
 */
import { SIGNER_HEARTBEAT_MS } from "./batch.js";

export interface CrashWindow {
  /** After the run's last batch (default: two heartbeats, 10 s). */
  afterMs: number;
  /** Before it: a batch in flight may land after a record it does not list (default 2 s). */
  beforeMs: number;
}

export const DEFAULT_CRASH_WINDOW: CrashWindow = {
  afterMs: 2 * SIGNER_HEARTBEAT_MS,
  beforeMs: 2000,
};

/** What a run's valid batches of a trusted key show. */
export interface RunEvidence {
  key: string;
  epoch: string;
  coordinator: string;
  /** When the server stored its last batch (epoch ms). */
  lastBatchAt: number;
  /** The highest sequence its batches list. */
  maxListed: number;
  /** A batch marked `last`: the run stopped cleanly. */
  last: boolean;
}

/** Runs remembered; a record of a forgotten run is judged unsigned (the safe side). */
const RUNS_REMEMBERED = 10_000;

/** The runs' evidence, in a bounded LRU keyed by key and epoch. */
export class RunEvidenceMap {
  private readonly runs = new Map<string, RunEvidence>();

  note(
    key: string,
    batch: { epoch: string; coordinator: string; records: [number, string][]; last?: true },
    storedAt: number,
  ): void {
    const id = `${key}\n${batch.epoch}`;
    const run = this.runs.get(id) ?? {
      key,
      epoch: batch.epoch,
      coordinator: batch.coordinator,
      lastBatchAt: 0,
      maxListed: 0,
      last: false,
    };
    run.lastBatchAt = Math.max(run.lastBatchAt, storedAt);
    for (const [seq] of batch.records) run.maxListed = Math.max(run.maxListed, seq);
    run.last ||= batch.last === true;
    this.runs.delete(id);
    this.runs.set(id, run);
    if (this.runs.size > RUNS_REMEMBERED) this.runs.delete(this.runs.keys().next().value!);
  }

  get(key: string, epoch: string): RunEvidence | undefined {
    return this.runs.get(`${key}\n${epoch}`);
  }
}

/** Why a record naming `run` is not in its crash tail; undefined when it is. */
export function outsideCrashWindow(
  run: RunEvidence | undefined,
  record: { seq: number; storedAt: number; signerRun: string },
  window: CrashWindow,
): string | undefined {
  const name = `its run ${record.signerRun}`;
  if (run === undefined) return `${name} has no batch of that key`;
  if (run.last) return `${name} stopped cleanly and signed all it wrote`;
  if (record.seq < run.maxListed)
    return `${name} signed later records (up to seq ${run.maxListed}) and not this one`;
  if (record.storedAt > run.lastBatchAt + window.afterMs)
    return `stored ${record.storedAt - run.lastBatchAt} ms after its run's last batch, beyond the crash window (${window.afterMs} ms)`;
  if (record.storedAt < run.lastBatchAt - window.beforeMs)
    return `${name} lived ${run.lastBatchAt - record.storedAt} ms past it without signing it`;
  return undefined;
}
