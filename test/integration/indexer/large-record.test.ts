/**
 * A record too large for one message is stored as a blob reference (its body in the blob
 * stream). The indexer must index it like any other record — whole, as json — and the records
 * after it, so its lag reaches 0.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { bodyHeaders } from "../../../src/bus/codec.js";
import { startIndexer, type Indexer } from "../../../src/indexer/index.js";
import { publishSyntheticLog, syntheticRecord } from "../../support/synthetic-log.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const postgres = usePostgres();
const running: Indexer[] = [];
afterAll(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

describe("hookbus indexer and blob-backed records", () => {
  it(
    "indexes a large blob-backed record whole, then the records after it, and its lag reaches 0",
    { timeout: 90_000 },
    async () => {
      const namespace = uniqueNamespace("idxblob");
      const bus = await Bus.open(await nats.connect(), { namespace });
      await publishSyntheticLog(bus, { records: 5, sessions: 5, agents: 1 });
      // Random base64 does not gzip below the inline limit: the codec stores it as a blob.
      const big = randomBytes(1536 * 1024).toString("base64");
      const { record, agentId, sessionKey, kind } = syntheticRecord(5, { sessions: 5, agents: 1 });
      if (record.kind !== "decision") throw new Error("record 5 is a decision");
      const large = { ...record, event: { ...record.event, params: { content: big } } };
      const encoded = await bus.codec.encode(large);
      expect(encoded.encoding).toBe("blob");
      await bus.js.publish(
        bus.subjects.audit(agentId, sessionKey, "before_tool_call", kind),
        encoded.data,
        { headers: bodyHeaders(encoded) },
      );
      await publishSyntheticLog(bus, { records: 5, sessions: 5, agents: 1 }, 6);

      const { pool } = await postgres.database();
      // A long ack wait: a record the indexer dropped is not rescued by a redelivery within the wait.
      const indexer = await startIndexer({
        bus,
        pool,
        batchSize: 4,
        flushIntervalMs: 20,
        ackWaitMs: 120_000,
      });
      running.push(indexer);
      await until(async () => (await indexer.lag()).records === 0, 30_000, "index caught up");
      const rows = await pool.query<{ seq: number; kind: string; size: number }>(
        `SELECT seq::int, kind, length(record->'event'->'params'->>'content')::int AS size
       FROM hookbus_records WHERE ns = $1 ORDER BY seq`,
        [namespace],
      );
      expect(rows.rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(rows.rows[5]).toEqual({ seq: 6, kind: "decision", size: big.length });
      expect(indexer.stats).toMatchObject({ indexed: 11, invalid: 0 });
    },
  );
});
