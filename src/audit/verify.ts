/**
 * `verifyLog`: check every record of the log against the seal batches (docs/tamper-evidence.md).
 * Reading (verify-read.ts), analysis (verify-analyse.ts, pure) and formatting (verify-format.ts)
 * are apart; this file only walks both streams in step: batch k, then the log records up to its
 * `toSeq`, so memory holds one batch, whatever the size of the log.
 */
import type { Bus } from "../bus/bus.js";
import { encodeToken } from "../bus/tokens.js";
import { assertLogExists } from "../log/reader.js";
import {
  SealAnalyser,
  type AnchorPoint,
  type VerifyFinding,
  type VerifyReport,
} from "./verify-analyse.js";
import {
  readBounds,
  readLogItems,
  readSealBatches,
  readSignatureBatches,
  type LogItem,
  type ReadBounds,
} from "./verify-read.js";
import { RecordSignatureCheck } from "./verify-signatures.js";
import { checkSealerLease } from "./verify-lease.js";
import { bytesHash } from "../log/seal/hash.js";
import type { StoredSignatureBatch } from "../log/sign/batch.js";

export type { VerifyFinding, VerifyReport, FindingKind } from "./verify-analyse.js";
export type { CrashTail } from "./verify-crash-tail.js";
export { formatVerifyReport } from "./verify-format.js";

export interface VerifyOptions {
  agentId?: string;
  sessionKey?: string;
  /** Trusted sealer public keys (nkeys). Without any, a batch's own key is taken at its word. */
  keys?: readonly string[];
  /** A batch an anchor vouches for (readAnchor): the seal stream must still hold it. */
  anchor?: AnchorPoint;
  /** Records unsealed longer than this (ms) are `stalled` findings (default 50 s: 10× the lease). */
  maxSealDelayMs?: number;
  /**
   * Trusted coordinator public keys (`parseTrustedKeys`): every record must be signed by one of
   * them (docs/security.md). Without any, records are not checked for signatures.
   */
  coordinatorKeys?: readonly string[];
  /** How long a record may wait for its coordinator's signature batch (default 60 s). */
  signatureGraceMs?: number;
  /**
   * How long after a coordinator run's last signature batch its unsigned records count as its
   * crash tail, not as forged (default DEFAULT_CRASH_WINDOW_MS: two heartbeats).
   */
  crashWindowMs?: number;
}

export const DEFAULT_SIGNATURE_GRACE_MS = 60_000;

export async function verifyLog(bus: Bus, options: VerifyOptions = {}): Promise<VerifyReport> {
  await assertLogExists(bus);
  const bounds = await readBounds(bus);
  const analyser = new SealAnalyser({
    namespace: bus.subjects.namespace,
    keys: options.keys ?? [],
    ...(options.agentId === undefined ? {} : { agentId: options.agentId }),
    ...(options.sessionKey === undefined ? {} : { sessionKey: options.sessionKey }),
    ...(options.anchor === undefined ? {} : { anchor: options.anchor }),
    ...(options.maxSealDelayMs === undefined ? {} : { maxSealDelayMs: options.maxSealDelayMs }),
  });
  const agent = options.agentId === undefined ? "*" : encodeToken(options.agentId);
  const session = options.sessionKey === undefined ? "*" : encodeToken(options.sessionKey);
  // Unfiltered, `>` also reads records whose subject has another shape (a finding).
  const filter =
    agent === "*" && session === "*"
      ? bus.subjects.auditAll
      : `${bus.subjects.namespace}.audit.${agent}.${session}.*.*`;
  const log = readLogItems(bus, filter, bounds.logLastSeq);
  const signatures = signatureWalk(bus, bounds, options, filter !== bus.subjects.auditAll);
  const add = async (item: LogItem) => {
    analyser.addRecord(item);
    if (signatures !== undefined) for (const f of await signatures.check(item)) analyser.note(f);
  };
  // The lease first: its state now, before the walk (which may take a while on a large log).
  const sealed = bounds.sealLastSeq > 0;
  for (const f of await checkSealerLease(bus, options.keys ?? [], { sealed })) analyser.note(f);
  try {
    let next = await log.next();
    for await (const batch of readSealBatches(bus, bounds.sealLastSeq)) {
      analyser.addBatch(batch);
      const to = batch.batch?.toSeq ?? 0;
      while (next.done !== true && next.value.seq <= to) {
        await add(next.value);
        next = await log.next();
      }
    }
    while (next.done !== true) {
      await add(next.value);
      next = await log.next();
    }
    if (signatures === undefined) {
      return analyser.finish(
        bounds.signatureLastSeq === 0 ? {} : { uncheckedSignatureBatches: bounds.signatureLastSeq },
      );
    }
    const { findings, stats, crashTails } = await signatures.finish();
    for (const f of findings) analyser.note(f);
    return analyser.finish({ recordSignatures: stats, crashTails });
  } finally {
    await log.return(undefined);
    await signatures?.close();
  }
}

/**
 * Coordinator signatures, read in step with the log: before a record is judged, every batch
 * stored up to its time plus the grace (the latest its batch may come) is read.
 */
function signatureWalk(bus: Bus, bounds: ReadBounds, options: VerifyOptions, filtered: boolean) {
  const keys = options.coordinatorKeys ?? [];
  if (keys.length === 0) return undefined;
  const check = new RecordSignatureCheck({
    namespace: bus.subjects.namespace,
    keys,
    graceMs: options.signatureGraceMs ?? DEFAULT_SIGNATURE_GRACE_MS,
    now: Date.now(),
    filtered,
    logFirstSeq: bounds.logFirstSeq,
    signatureFirstSeq: bounds.signatureFirstSeq,
    ...(options.crashWindowMs === undefined
      ? {}
      : { crashWindow: { afterMs: options.crashWindowMs } }),
  });
  const batches = readSignatureBatches(bus, bounds.signatureLastSeq);
  let next: IteratorResult<StoredSignatureBatch> | undefined;
  const readUntil = async (until: number, floorSeq: number, into: VerifyFinding[]) => {
    next ??= await batches.next();
    while (next.done !== true && next.value.storedAt <= until) {
      into.push(...check.addBatch(next.value, bytesHash(next.value.data), floorSeq));
      next = await batches.next();
    }
  };
  return {
    async check(item: LogItem): Promise<VerifyFinding[]> {
      const findings: VerifyFinding[] = [];
      await readUntil(check.horizon(item), item.seq, findings);
      findings.push(...check.checkRecord(item));
      return findings;
    },
    async finish() {
      const findings: VerifyFinding[] = [];
      await readUntil(Number.MAX_SAFE_INTEGER, bounds.logLastSeq + 1, findings);
      const done = check.finish();
      return { ...done, findings: [...findings, ...done.findings] };
    },
    close: () => batches.return(undefined),
  };
}
