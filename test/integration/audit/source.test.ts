/**
 * Issue 33, item 4: one AuditSource, whichever reader answers. On one real log (nats-server) and
 * its index (PostgreSQL), the log scan and the index give the same records for the same filters,
 * the same session timeline, the same record by sequence and the same replay selection; what only
 * the index answers is refused by the log source with a coded error, not answered by a hidden
 * full scan; and the log source keeps the scan guard.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAuditSource, type AuditFilter, type AuditSource } from "../../../src/audit/index.js";
import { startIndexer, type Indexer } from "../../../src/indexer/index.js";
import { buildAuditLog, collect, NIGHT, OPS, SUPPORT, type AuditLog } from "./fixture.js";
import { useNatsServer } from "../pipeline/harness.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const postgres = usePostgres();

let log: AuditLog;
let indexer: Indexer;
let scan: AuditSource;
let index: AuditSource;
let indexUrl: string;

beforeAll(async () => {
  log = await buildAuditLog(nats.url());
  const { pool, url } = await postgres.database();
  indexUrl = url;
  indexer = await startIndexer({ bus: log.bus, pool });
  await until(async () => (await indexer.lag()).records === 0, 20_000, "the index caught up");
  scan = await openAuditSource({ bus: log.bus });
  index = await openAuditSource({ indexUrl: url, bus: log.bus, checkSchema: true });
}, 90_000);

afterAll(async () => {
  await index?.close();
  await indexer?.stop();
  await log?.close();
});

const seqs = (entries: { seq: number }[]) => entries.map((e) => e.seq);

describe("openAuditSource", () => {
  it("picks the index when given its URL, else the log", () => {
    expect(index.kind).toBe("index");
    expect(scan.kind).toBe("log");
    expect(index.namespace).toBe(scan.namespace);
  });

  it.each<[string, AuditFilter]>([
    ["everything", {}],
    ["one agent", { agentId: OPS }],
    ["one session", { sessionKey: NIGHT }],
    ["blocks", { outcome: "block" }],
    ["one hook of one agent", { agentId: SUPPORT, hook: "before_tool_call" }],
  ])("the log and the index give the same records: %s", async (_what, filter) => {
    const fromLog = await collect(scan.query(filter));
    const fromIndex = await collect(index.query(filter));
    expect(fromLog.length).toBeGreaterThan(0);
    expect(seqs(fromIndex)).toEqual(seqs(fromLog));
    expect(fromIndex.map((e) => e.record)).toEqual(fromLog.map((e) => e.record));
  });

  it("gives the same timeline and the same record by sequence", async () => {
    const [fromLog, fromIndex] = await Promise.all([
      scan.timeline("conv-1", { agentId: SUPPORT }),
      index.timeline("conv-1", { agentId: SUPPORT }),
    ]);
    expect(fromLog.length).toBeGreaterThan(2);
    expect(fromIndex).toEqual(fromLog);
    const [first] = await collect(scan.query({ sessionKey: NIGHT }));
    expect((await index.record(first!.seq))?.record).toEqual(first!.record);
    expect((await scan.record(first!.seq))?.record).toEqual(first!.record);
    expect(await scan.record(10_000_000)).toBeUndefined();
  });

  it("gives the same replay selection, the log's own records", async () => {
    const selection = { sessions: ["conv-2", NIGHT] };
    const fromLog = await collect(scan.selection(selection));
    const fromIndex = await collect(index.selection(selection));
    expect(fromLog.length).toBeGreaterThan(0);
    expect(seqs(fromIndex)).toEqual(seqs(fromLog));
  });

  it("the log refuses what only the index answers, naming the index", async () => {
    const range = { since: new Date(0), until: new Date() };
    const asks: (() => Promise<unknown>)[] = [
      () => scan.page({}),
      () => scan.stats({}),
      () => scan.countsPerMinute(range),
      () => scan.pendingApprovals({ limit: 10 }),
      () => collect(scan.query({ blockedBy: "x" })),
    ];
    for (const ask of asks) {
      const error = await Promise.resolve()
        .then(ask)
        .then(
          () => undefined,
          (e: unknown) => e as { code?: string; message?: string },
        );
      expect(error?.code).toBe("HOOKBUS_INVALID_ARGUMENT");
      expect(error?.message).toMatch(/needs the index/);
    }
    expect((await index.page({ outcome: "block", limit: 1 })).entries).toHaveLength(1);
    expect((await index.stats({})).total).toBeGreaterThan(0);
  });

  it("the log source keeps the scan guard (HOOKBUS_SCAN_TOO_LARGE above maxScan)", async () => {
    const small = await openAuditSource({ bus: log.bus, maxScan: 1 });
    await expect(collect(small.query({}))).rejects.toMatchObject({
      code: "HOOKBUS_SCAN_TOO_LARGE",
    });
    await expect(small.timeline("conv-1")).rejects.toMatchObject({
      code: "HOOKBUS_SCAN_TOO_LARGE",
    });
  });

  it("opens the log's connection only when the log is read, and closes it with the source", async () => {
    const opened: string[] = [];
    const connectLog = () => {
      opened.push("open");
      return Promise.resolve({
        bus: log.bus,
        close: () => (opened.push("close"), Promise.resolve()),
      });
    };
    const viaLog = await openAuditSource({ connectLog });
    expect(viaLog.kind).toBe("log");
    expect((await collect(viaLog.query({ sessionKey: NIGHT }))).length).toBeGreaterThan(0);
    await viaLog.close();
    expect(opened).toEqual(["open", "close"]);
    const viaIndex = await openAuditSource({ indexUrl: indexUrl, connectLog });
    await viaIndex.close();
    expect(opened).toEqual(["open", "close"]);
  });

  it("without an index URL or a bus, says what it needs", async () => {
    await expect(openAuditSource({})).rejects.toMatchObject({ code: "HOOKBUS_INVALID_ARGUMENT" });
  });
});
