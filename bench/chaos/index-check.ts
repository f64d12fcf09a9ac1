/**
 * The chaos run's index comparison (issue 32): an indexer (`hookbus indexer`) writes the log
 * into a PostgreSQL database of the run's own through every fault, is itself killed (kill -9),
 * and has its PostgreSQL connections cut (`pg_terminate_backend`). After the calls, once it
 * caught up (bounded), every log record must be in PostgreSQL exactly once and nothing else:
 * `missing` log sequences without a row, `extra` rows the log does not hold, `duplicates` rows
 * beyond one per sequence.
 */
import { openIndexPool } from "../../src/indexer/index.js";
import type { Bus } from "../../src/bus/bus.js";
import {
  createTestDatabase,
  findPostgres,
  type PostgresHandle,
  type TestDatabase,
} from "../../test/support/postgres-server.js";

export interface IndexComparison {
  /** Log records (stream messages) and index rows of the namespace. */
  logRecords: number;
  rows: number;
  missing: number;
  extra: number;
  duplicates: number;
  /** Seconds after the calls until the index held every record (or the wait ran out). */
  catchUpS: number;
}

export interface ChaosIndex {
  url: string;
  /**
   * Terminates the indexer's PostgreSQL connections (`application_name` hookbus-indexer) to the
   * run's database, once it holds one (waiting up to `waitMs`): how many were cut.
   */
  cut(waitMs: number): Promise<number>;
  /** Waits (up to `waitMs`) for the index to hold the whole log, then compares. */
  compare(reader: Bus, namespace: string, waitMs: number): Promise<IndexComparison>;
  drop(): Promise<void>;
}

export async function startChaosIndex(): Promise<ChaosIndex> {
  const server: PostgresHandle = await findPostgres();
  const db: TestDatabase = await createTestDatabase(server, "hookbus_chaos");
  const pool = openIndexPool(db.url, { max: 1, applicationName: "hookbus-chaos" });
  return {
    url: db.url,
    async cut(waitMs) {
      // A freshly restarted indexer may not have connected yet: a cut of nothing tests nothing.
      for (const until = Date.now() + waitMs; ;) {
        const result = await pool.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity " +
            "WHERE datname = current_database() AND application_name = 'hookbus-indexer'",
        );
        const cut = result.rowCount ?? 0;
        if (cut > 0 || Date.now() > until) return cut;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async compare(reader, namespace, waitMs) {
      const start = Date.now();
      const info = await reader.jsm.streams.info(reader.subjects.logStream);
      const { first_seq: first, last_seq: last, messages } = info.state;
      type Row = { seq: string };
      let seqs: number[] = [];
      for (const until = start + waitMs; ;) {
        const rows = await pool.query<Row>("SELECT seq FROM hookbus_records WHERE ns = $1", [
          namespace,
        ]);
        seqs = rows.rows.map((r) => Number(r.seq));
        if (seqs.length >= messages || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const catchUpS = (Date.now() - start) / 1000;
      const distinct = new Set(seqs);
      // The log is append-only (no deletes): its records are every sequence first..last.
      const inLog = (seq: number) => seq >= first && seq <= last;
      let missing = 0;
      for (let seq = first; seq <= last && messages > 0; seq++) if (!distinct.has(seq)) missing++;
      return {
        logRecords: messages,
        rows: seqs.length,
        missing,
        extra: [...distinct].filter((seq) => !inLog(seq)).length,
        duplicates: seqs.length - distinct.size,
        catchUpS,
      };
    },
    async drop() {
      await pool.end().catch(() => {});
      await db.drop();
      await server.stop();
    },
  };
}
