/**
 * `verifyLog`: check every record of the log against the seal batches (docs/tamper-evidence.md).
 * Reading (verify-read.ts), analysis (verify-analyse.ts, pure) and formatting (verify-format.ts)
 * are apart; this file only walks both streams in step: batch k, then the log records up to its
 * `toSeq`, so memory holds one batch, whatever the size of the log.
 */
import type { Bus } from "../bus/bus.js";
import { encodeToken } from "../bus/tokens.js";
import { assertLogExists } from "../log/reader.js";
import { SealAnalyser, type AnchorPoint, type VerifyReport } from "./verify-analyse.js";
import { readBounds, readLogItems, readSealBatches } from "./verify-read.js";

export type { VerifyFinding, VerifyReport, FindingKind } from "./verify-analyse.js";
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
}

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
  try {
    let next = await log.next();
    for await (const batch of readSealBatches(bus, bounds.sealLastSeq)) {
      analyser.addBatch(batch);
      const to = batch.batch?.toSeq ?? 0;
      while (next.done !== true && next.value.seq <= to) {
        analyser.addRecord(next.value);
        next = await log.next();
      }
    }
    while (next.done !== true) {
      analyser.addRecord(next.value);
      next = await log.next();
    }
  } finally {
    await log.return(undefined);
  }
  return analyser.finish();
}
