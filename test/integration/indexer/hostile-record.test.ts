/**
 * Records PostgreSQL would refuse must not stall the index: an agent can put a lone UTF-16
 * surrogate or a NUL in any string of its call (JSON allows both, PostgreSQL's JSON functions and text refuse them), and
 * a record's fields may hold values a column cannot (here a fractional registry revision for a
 * bigint column). Every record is indexed — the first two with U+FFFD in place, the last as an
 * `invalid` row saying why — the records after them too, and the lag reaches 0.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { RECORD_DEPTH_ALLOWANCE, bodyHeaders } from "../../../src/bus/codec.js";
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

describe("hookbus indexer and records PostgreSQL refuses", () => {
  it("indexes lone surrogates and NULs replaced, a value no column holds as invalid, and goes on", async () => {
    const namespace = uniqueNamespace("idxhostile");
    const bus = await Bus.open(await nats.connect(), { namespace });
    await publishSyntheticLog(bus, { records: 3, sessions: 3, agents: 1 });
    const publish = async (i: number, change: (r: Record<string, unknown>) => object) => {
      const { record, agentId, sessionKey, kind } = syntheticRecord(i, { sessions: 3, agents: 1 });
      const encoded = await bus.codec.encode(change(record));
      await bus.js.publish(
        bus.subjects.audit(agentId, sessionKey, "before_tool_call", kind),
        encoded.data,
        { headers: bodyHeaders(encoded) },
      );
    };
    // seq 4: a lone surrogate in the event and in the call id (a column); seq 5: NUL in the run id.
    await publish(3, (r) => ({ ...r, callId: "call-\ud800", event: { text: "a\udc00b" } }));
    await publish(4, (r) => ({ ...r, context: { ...(r.context as object), runId: "run\u0000" } }));
    // seq 6: a registry revision no bigint column holds.
    await publish(5, (r) => ({ ...r, registryRevision: 1.5 }));
    await publishSyntheticLog(bus, { records: 3, sessions: 3, agents: 1 }, 6);

    const { pool } = await postgres.database();
    // Whole batches: the refused record is in a batch with good ones.
    const indexer = await startIndexer({ bus, pool, batchSize: 100, ackWaitMs: 120_000 });
    running.push(indexer);
    await until(async () => (await indexer.lag()).records === 0, 60_000, "index caught up");
    const rows = await pool.query<{
      seq: number;
      kind: string;
      call_id: string | null;
      run_id: string | null;
      text: string | null;
      index_error: string | null;
    }>(
      `SELECT seq::int, kind, call_id, run_id, record->'event'->>'text' AS text, index_error
       FROM hookbus_records WHERE ns = $1 ORDER BY seq`,
      [namespace],
    );
    expect(rows.rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(rows.rows[3]).toMatchObject({
      kind: "decision",
      call_id: "call-\ufffd",
      text: "a\ufffdb",
    });
    expect(rows.rows[4]).toMatchObject({ kind: "decision", run_id: "run\ufffd" });
    expect(rows.rows[5]).toMatchObject({
      kind: "invalid",
      index_error: expect.stringMatching(/^HOOKBUS_INDEX_REJECTED: .*bigint/) as string,
    });
    expect(rows.rows.filter((r) => r.kind === "invalid")).toHaveLength(1);
    expect(indexer.stats).toMatchObject({ indexed: 9, invalid: 1 });
  }, 120_000);

  it("a record whose unread part is not JSON is refused by PostgreSQL and indexed as invalid, and the batch goes on", async () => {
    // The indexer reads only the fields its columns need (record-scan.ts); the rest is checked by
    // PostgreSQL's JSON parser when the batch is copied in.
    const namespace = uniqueNamespace("idxunread");
    const bus = await Bus.open(await nats.connect(), { namespace });
    await publishSyntheticLog(bus, { records: 3, sessions: 3, agents: 1 });
    const { record, agentId, sessionKey, kind } = syntheticRecord(3, { sessions: 3, agents: 1 });
    const text = JSON.stringify({ ...record, event: { x: "PLACEHOLDER" } });
    await bus.js.publish(
      bus.subjects.audit(agentId, sessionKey, "before_tool_call", kind),
      new TextEncoder().encode(text.replace('"PLACEHOLDER"', "tru")),
    );
    await publishSyntheticLog(bus, { records: 3, sessions: 3, agents: 1 }, 4);

    const { pool } = await postgres.database();
    const indexer = await startIndexer({ bus, pool, batchSize: 100, ackWaitMs: 120_000 });
    running.push(indexer);
    await until(async () => (await indexer.lag()).records === 0, 60_000, "index caught up");
    const rows = await pool.query<{ seq: number; kind: string; index_error: string | null }>(
      "SELECT seq::int, kind, index_error FROM hookbus_records WHERE ns = $1 ORDER BY seq",
      [namespace],
    );
    expect(rows.rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(rows.rows[3]).toMatchObject({
      kind: "invalid",
      index_error: expect.stringMatching(/^HOOKBUS_INDEX_REJECTED: .*json/) as string,
    });
    expect(rows.rows.filter((r) => r.kind === "invalid")).toHaveLength(1);
    expect(indexer.stats).toMatchObject({ indexed: 7, invalid: 1 });
  }, 120_000);
  it("a record as deep as the log allows records to be is indexed, not refused", async () => {
    // A call at the depth bound makes a record a few levels deeper: the log reader reads records
    // with the codec's record allowance, and so must the indexer.
    const namespace = uniqueNamespace("idxdeep");
    const bus = await Bus.open(await nats.connect(), { namespace });
    await publishSyntheticLog(bus, { records: 1, sessions: 1, agents: 1 });
    const { record, agentId, sessionKey, kind } = syntheticRecord(1, { sessions: 1, agents: 1 });
    const depth = bus.codec.limits.maxDepth + RECORD_DEPTH_ALLOWANCE - 2;
    let deep: unknown = "bottom";
    for (let level = 2; level < depth; level++) deep = { d: deep };
    await bus.js.publish(
      bus.subjects.audit(agentId, sessionKey, "before_tool_call", kind),
      new TextEncoder().encode(JSON.stringify({ ...record, event: deep })),
    );

    const { pool } = await postgres.database();
    const indexer = await startIndexer({ bus, pool, batchSize: 100, ackWaitMs: 120_000 });
    running.push(indexer);
    await until(async () => (await indexer.lag()).records === 0, 60_000, "index caught up");
    const rows = await pool.query<{ kind: string; index_error: string | null }>(
      "SELECT kind, index_error FROM hookbus_records WHERE ns = $1 ORDER BY seq",
      [namespace],
    );
    expect(rows.rows).toEqual([
      { kind: "decision", index_error: null },
      { kind: "decision", index_error: null },
    ]);
  }, 120_000);
});
