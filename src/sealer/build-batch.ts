/**
 * One seal batch from the records read since the last one: each record's hash chained onto its
 * session's previous head, and the sessions' new heads (stored once the batch is appended).
 */
import {
  SEAL_VERSION,
  sessionOfSubject,
  type SealBatch,
  type SealedSession,
} from "../log/seal/batch.js";
import { chainHash } from "../log/seal/hash.js";
import type { SessionHead, SessionHeads } from "./heads.js";

/** A log record read and not sealed yet. */
export interface PendingRecord {
  seq: number;
  subject: string;
  data: Uint8Array;
  storedAt: number;
  /** Its `Hookbus-Signer` and `Hookbus-Signer-Run` headers (the signature check's crash window). */
  signer?: string;
  signerRun?: string;
}

/** Where the next batch starts: the last batch stored on the seal stream. */
export interface SealCursor {
  /** Index and hash of the last batch (0 / null: none). */
  index: number;
  hash: string | null;
  /** The next log sequence to seal. */
  nextSeq: number;
}

export interface BatchContext {
  namespace: string;
  heads: SessionHeads;
  /** This sealer's id, recorded in the batch. */
  sealer: string;
}

export async function buildBatch(
  items: PendingRecord[],
  from: SealCursor,
  context: BatchContext,
): Promise<{ batch: SealBatch; heads: Map<string, SessionHead> }> {
  const { namespace, heads } = context;
  const keyOf = (item: PendingRecord) => sessionOfSubject(namespace, item.subject);
  // Heads of the batch's sessions, looked up at once (a cold cache means one KV read each).
  const keys = [...new Set(items.map(keyOf))];
  const known = await Promise.all(keys.map((key) => heads.get(key)));
  const sessions = new Map<string, SealedSession>(
    keys.map((key, i) => [
      key,
      { session: key, prev: known[i]?.hash ?? null, count: known[i]?.count ?? 0, records: [] },
    ]),
  );
  for (const item of items) {
    const s = sessions.get(keyOf(item))!;
    const prev = s.records.at(-1)?.[1] ?? s.prev;
    s.records.push([item.seq, chainHash(prev, item.subject, item.data)]);
    s.count++;
  }
  const last = items.at(-1)!;
  const batch: SealBatch = {
    v: SEAL_VERSION,
    namespace,
    index: from.index + 1,
    fromSeq: from.nextSeq,
    toSeq: last.seq,
    prev: from.hash,
    sessions: [...sessions.values()],
    loggedAt: new Date(last.storedAt).toISOString(),
    sealedAt: new Date().toISOString(),
    sealer: context.sealer,
  };
  const newHeads = new Map(
    batch.sessions.map((s) => [s.session, { hash: s.records.at(-1)![1], count: s.count }]),
  );
  return { batch, heads: newHeads };
}
