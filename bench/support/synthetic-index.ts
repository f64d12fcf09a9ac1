/**
 * Synthetic records as the indexer projects them, written the way it writes new ones, without
 * NATS or the indexer's consumer: for benchmarks of PostgreSQL's side of the audit index
 * (bench/index-cost.ts, bench/index-plans.ts).
 */
import { Subjects } from "../../src/bus/subjects.js";
import type { PgPool } from "../../src/indexer/index.js";
import { projectBytes, type Projection } from "../../src/indexer/projection.js";
import { writeBatchIsolating } from "../../src/indexer/writer.js";
import { syntheticRecord } from "../../test/support/synthetic-log.js";

export interface SyntheticIndex {
  namespace: string;
  sessions: number;
  /** Record 0's stored time; record i is stored i ms later. */
  startMs: number;
}

/** Record `i` (0-based) as the indexer projects it. */
export function syntheticProjection(index: SyntheticIndex, i: number): Projection {
  const subjects = new Subjects(index.namespace);
  const { record, agentId, sessionKey, kind } = syntheticRecord(i, { sessions: index.sessions });
  const subject = subjects.audit(agentId, sessionKey, record.hook as "before_tool_call", kind);
  const stored = {
    seq: i + 1,
    subject,
    storedAt: new Date(index.startMs + i),
    address: subjects.parseAudit(subject),
  };
  const projected = projectBytes(stored, new TextEncoder().encode(JSON.stringify(record)), 64);
  if (projected === undefined) throw new Error(`record ${i} was not projected`);
  return projected;
}

/** Writes records [from, from + count) by the new-records path, in batches of `batch`. */
export async function writeSyntheticRange(
  pool: PgPool,
  index: SyntheticIndex,
  from: number,
  count: number,
  batch = 2000,
): Promise<void> {
  for (let i = from; i < from + count; i += batch) {
    const projections: Projection[] = [];
    for (let j = i; j < Math.min(i + batch, from + count); j++)
      projections.push(syntheticProjection(index, j));
    const written = await writeBatchIsolating(pool, index.namespace, projections, { asNew: true });
    if (!written.asNew) throw new Error("a batch went the keyed way: the figures would mix paths");
  }
}
