/**
 * Crash tails in `audit verify` (issue 32, docs/security.md "Crash tails"). A coordinator answers
 * a call once its record is stored, and signs in batches up to 200 ms later; killed in between,
 * it leaves a few stored, answered records no batch will ever list. Each names its signer's key
 * and run (`Hookbus-Signer`, `Hookbus-Signer-Run`), and the run's batches (heartbeats included,
 * src/coordinator/record-signer.ts) show until when it lived. A record past the grace that no
 * batch lists is a crash tail, not a finding, only when all of this holds:
 *
 * - its key is trusted and its run has at least one valid batch of that key, none marked `last`
 *   (a run that stopped cleanly signed everything);
 * - its sequence is above every sequence the run's batches list (a live signer signs in order:
 *   an unlisted record followed by signed ones was not left by a crash);
 * - it was stored at most `afterMs` after the run's last batch (the run died within a heartbeat
 *   of it), and at most `beforeMs` before it (a batch in flight may land after a record it does
 *   not list; a run that kept writing batches long after the record lived, and did not sign it).
 *
 * Anything else stays `unsigned-record`. What an attacker who can append to the log gains: a
 * record in that window, after a coordinator's last batch, is named as that coordinator's crash
 * tail instead of failing verify; it is still listed, by sequence, in every report.
 *
 * The rule itself is src/log/sign/crash-window.ts (the sealer's early warning applies it too).
 * Bounded: MAX_HELD records wait for the end of the walk (beyond, they are judged unsigned at
 * once), and runs are kept in a bounded LRU (a record of a forgotten run is unsigned).
 */
import {
  DEFAULT_CRASH_WINDOW,
  RunEvidenceMap,
  outsideCrashWindow,
  type CrashWindow,
  type RunEvidence,
} from "../log/sign/crash-window.js";
import type { LogItem } from "./verify-read.js";

/** How long after its last batch a dead run's records may be stored: 2 heartbeats (10 s). */
export const DEFAULT_CRASH_WINDOW_MS = DEFAULT_CRASH_WINDOW.afterMs;
const MAX_HELD = 10_000;

/** One dead coordinator run's records that no batch lists (`VerifyReport.crashTails`). */
export interface CrashTail {
  /** The coordinator id its batches name. */
  coordinator: string;
  /** Its trusted signing key (public). */
  key: string;
  /** Its run (the batches' `epoch`, the records' `Hookbus-Signer-Run`). */
  run: string;
  /** How many records, and the first and last sequence. */
  records: number;
  fromSeq: number;
  toSeq: number;
  /** When the server stored the run's last batch (ISO time). */
  lastBatchAt: string;
  /** When the server stored the tail's last record (ISO time). */
  lastRecordAt: string;
  /** The records' sequences, in log order (at most 100 named). */
  seqs: number[];
}

export type CrashTailOptions = Partial<CrashWindow>;

export class CrashTails {
  private readonly runs = new RunEvidenceMap();
  private readonly held: LogItem[] = [];
  private readonly window: CrashWindow;

  constructor(options: CrashTailOptions = {}) {
    this.window = { ...DEFAULT_CRASH_WINDOW, ...options };
  }

  /** A valid batch of a trusted key: evidence that its run lived until `storedAt`. */
  addBatch(
    key: string,
    batch: { epoch: string; coordinator: string; records: [number, string][]; last?: true },
    storedAt: number,
  ): void {
    this.runs.note(key, batch, storedAt);
  }

  /**
   * A record past its grace that no trusted batch lists, naming a trusted key: held to be judged
   * once every batch is read. False when it cannot be a crash tail (no run named) or the bound
   * is reached: the caller reports it unsigned at once.
   */
  hold(item: LogItem): boolean {
    if (this.window.afterMs <= 0) return false; // no crash window: every unsigned record is a finding
    if (item.signer === undefined || item.signerRun === undefined) return false;
    if (this.held.length >= MAX_HELD) return false;
    this.held.push(item);
    return true;
  }

  /** After the last batch: the crash tails, and the held records that are not in one. */
  finish(): { tails: CrashTail[]; unsigned: { item: LogItem; why: string }[] } {
    const byRun = new Map<RunEvidence, LogItem[]>();
    const unsigned: { item: LogItem; why: string }[] = [];
    for (const item of this.held) {
      const run = this.runs.get(item.signer!, item.signerRun!);
      const why = outsideCrashWindow(run, { ...item, signerRun: item.signerRun! }, this.window);
      if (why !== undefined) unsigned.push({ item, why });
      else if (byRun.has(run!)) byRun.get(run!)!.push(item);
      else byRun.set(run!, [item]);
    }
    return { tails: [...byRun].map(([run, items]) => describeTail(run, items)), unsigned };
  }
}

function describeTail(run: RunEvidence, items: LogItem[]): CrashTail {
  return {
    coordinator: run.coordinator,
    key: run.key,
    run: run.epoch,
    records: items.length,
    fromSeq: items[0]!.seq,
    toSeq: items.at(-1)!.seq,
    lastBatchAt: new Date(run.lastBatchAt).toISOString(),
    lastRecordAt: new Date(Math.max(...items.map((i) => i.storedAt))).toISOString(),
    seqs: items.slice(0, 100).map((i) => i.seq),
  };
}
