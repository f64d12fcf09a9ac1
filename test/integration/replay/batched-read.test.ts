/**
 * Reading the log in batches (readLog without `follow`): one fetch of `batch` records at a time,
 * the next one on its way while the current one is handed on. The edges: an empty log, records
 * that end exactly on or just past a batch boundary, a malformed record in the middle of a batch,
 * and a server that stops delivering (the batch deadline).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { bodyHeaders } from "../../../src/bus/codec.js";
import { ensureLogStreams } from "../../../src/bus/streams.js";
import type { HookName } from "../../../src/catalog/catalog.js";
import type { HookbusError } from "../../../src/foundation/errors.js";
import { readLog, type LogEntry, type ReadLogStats } from "../../../src/log/reader.js";
import type { LogRecord } from "../../../src/log/record.js";
import { replay, summarizeReplay } from "../../../src/replay/index.js";
import * as fixturePolicies from "../../fixtures/policies/index.js";
import fixtureRegistry from "../../fixtures/registry.json" with { type: "json" };
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { rejection } from "../../support/wait.js";

const nats = useNatsServer({ own: true });

/** The recorded fixture sessions: real records, with the subjects they were stored on. */
const FIXTURE = readFileSync(
  fileURLToPath(new URL("../../fixtures/sessions.ndjson", import.meta.url)),
  "utf8",
)
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as Pick<LogEntry, "address" | "record">);

async function emptyLog(): Promise<Bus> {
  const bus = await Bus.open(await nats.connect(), { namespace: uniqueNamespace("batch") });
  await ensureLogStreams(bus.jsm, bus.subjects);
  return bus;
}

/** A log holding the first `count` fixture records; returns their sequences. */
async function logOf(count: number): Promise<{ bus: Bus; seqs: number[] }> {
  const bus = await emptyLog();
  const seqs: number[] = [];
  for (const { address, record } of FIXTURE.slice(0, count))
    seqs.push(await append(bus, record, address));
  return { bus, seqs };
}

async function append(
  bus: Bus,
  record: LogRecord | Uint8Array,
  address: LogEntry["address"],
): Promise<number> {
  const subject = bus.subjects.audit(
    address.agentId,
    address.sessionKey,
    address.hook as HookName,
    address.kind,
  );
  if (record instanceof Uint8Array) return (await bus.js.publish(subject, record)).seq;
  const encoded = await bus.codec.encode(record);
  return (await bus.js.publish(subject, encoded.data, { headers: bodyHeaders(encoded) })).seq;
}

async function seqsRead(bus: Bus, options: Parameters<typeof readLog>[1] = {}): Promise<number[]> {
  const seqs: number[] = [];
  for await (const entry of readLog(bus, options)) seqs.push(entry.seq);
  return seqs;
}

describe("reading the log in batches", () => {
  it("an empty log: no record, no fetch, and the read ends at once", async () => {
    const bus = await emptyLog();
    const stats: ReadLogStats = { delivered: 0 };
    expect(await seqsRead(bus, { stats, batch: 3 })).toEqual([]);
    expect(stats).toMatchObject({ pending: 0, delivered: 0 });
    // A filter that matches nothing in a log that has records ends the same way.
    const { bus: full } = await logOf(4);
    expect(await seqsRead(full, { filter: { agentId: "nobody" }, batch: 3 })).toEqual([]);
  });

  it.each([
    [6, 3, "ends exactly on a batch boundary"],
    [7, 3, "ends one record past a boundary"],
    [5, 1, "batches of one record"],
    [5, 1000, "fits in one batch"],
  ])("%i records in batches of %i (%s): each once, in log order", async (count, batch) => {
    const { bus, seqs } = await logOf(count);
    const stats: ReadLogStats = { delivered: 0 };
    expect(await seqsRead(bus, { batch, stats })).toEqual(seqs);
    expect(stats).toMatchObject({ pending: count, delivered: count });
  });

  it("a record appended while reading is not read: the read ends where the log ended", async () => {
    const { bus, seqs } = await logOf(5);
    const read: number[] = [];
    for await (const entry of readLog(bus, { batch: 2 })) {
      if (read.length === 0) await append(bus, FIXTURE[5]!.record, FIXTURE[5]!.address);
      read.push(entry.seq);
    }
    expect(read).toEqual(seqs);
  });

  it("a malformed record in the middle of a batch is reported with its sequence and skipped; the rest of the batch is read", async () => {
    const bus = await emptyLog();
    const good: number[] = [];
    let bad = 0;
    for (const [i, { address, record }] of FIXTURE.slice(0, 5).entries()) {
      if (i === 2)
        bad = await append(bus, new TextEncoder().encode('{"v":1,"kind":"??"}'), address);
      good.push(await append(bus, record, address));
    }
    const stats: ReadLogStats = { delivered: 0 };
    const reported: HookbusError[] = [];
    const read = await seqsRead(bus, { batch: 4, stats, onBadRecord: (e) => reported.push(e) });
    expect(read).toEqual(good);
    expect(stats).toMatchObject({ delivered: 6, badRecords: [bad], badRecordCount: 1 });
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ code: "HOOKBUS_BAD_RECORD", details: { seq: bad } });
    expect(reported[0]!.message).toContain("does not match the record schema");
  });

  it("replay over a read in batches of 3: the same results as over the export", async () => {
    const count = FIXTURE.length;
    const { bus } = await logOf(count);
    const options = { policies: Object.values(fixturePolicies), registry: fixtureRegistry };
    const fromLog = [];
    for await (const result of replay({
      ...options,
      records: readLog(bus, { filter: { agentId: "support-bot" }, batch: 3 }),
    }))
      fromLog.push(result);
    const fromFile = [];
    for await (const result of replay({
      ...options,
      records: FIXTURE.filter((e) => e.address.agentId === "support-bot"),
    }))
      fromFile.push(result);
    expect(fromLog.length).toBeGreaterThan(3);
    expect(fromLog.map(({ seq: _seq, ...r }) => r)).toEqual(fromFile.map(({ seq: _s, ...r }) => r));
    expect(summarizeReplay(fromLog).changed).toBe(0);
  });

  it("a server that stops delivering: HOOKBUS_LOG_READ_TIMEOUT after the batch deadline, never a read that ends as if complete", async () => {
    const { bus, seqs } = await logOf(6);
    const read: number[] = [];
    const reading = (async () => {
      for await (const entry of readLog(bus, { batch: 1, batchDeadlineMs: 1000 })) {
        read.push(entry.seq);
        if (read.length === 1) await nats.handle().kill();
      }
    })();
    try {
      const error = await rejection(reading);
      expect(error).toMatchObject({ code: "HOOKBUS_LOG_READ_TIMEOUT" });
      expect(read.length).toBeLessThan(seqs.length);
    } finally {
      await nats.handle().start();
    }
  }, 60_000);
});
