/**
 * The pure analyser of `audit verify`, fed by hand: a clean log has no findings, and each kind of
 * change is named by its sequence (or batch), with nothing else reported.
 */
import { describe, expect, it } from "vitest";
import { SealAnalyser, type AnalyserOptions } from "../../../src/audit/verify-analyse.js";
import type { LogItem } from "../../../src/audit/verify-read.js";
import type { SealBatch } from "../../../src/log/seal/batch.js";
import { bytesHash, chainHash } from "../../../src/log/seal/hash.js";
import { createSealKey, sealKeyFromSeed } from "../../../src/log/seal/keys.js";
import { toStoredBatch } from "../../../src/log/seal/stream.js";

const key = sealKeyFromSeed(createSealKey().seed);
const NS = "t";

function record(n: number, outcome = "allow") {
  const raw = {
    v: 1,
    kind: "decision",
    callId: `call-${n}`,
    hook: "before_tool_call",
    context: { agentId: "a", sessionKey: "s" },
    decision: { outcome },
  };
  const subject = `${NS}.audit.a.s.before_tool_call.${outcome}`;
  const data = new TextEncoder().encode(JSON.stringify(raw));
  return { seq: n, subject, data, storedAt: Date.now(), record: raw } satisfies LogItem;
}

/** Batches of `size` records over `items`, signed with `signer`. */
function seal(items: LogItem[], size: number, signer = key) {
  const batches = [];
  let prevBatch: string | null = null;
  let head: string | null = null;
  let count = 0;
  for (let i = 0, index = 1; i < items.length; i += size, index++) {
    const part = items.slice(i, i + size);
    const sessionPrev = head;
    const records: [number, string][] = part.map((item) => {
      head = chainHash(head, item.subject, item.data);
      return [item.seq, head];
    });
    count += part.length;
    const batch: SealBatch = {
      v: 1,
      namespace: NS,
      index,
      fromSeq: part[0]!.seq,
      toSeq: part.at(-1)!.seq,
      prev: prevBatch,
      sessions: [{ session: "a.s", prev: sessionPrev, count, records }],
      loggedAt: new Date(0).toISOString(),
      sealedAt: new Date(0).toISOString(),
      sealer: "test",
    };
    const data = new TextEncoder().encode(JSON.stringify(batch));
    const headers = new Map([
      ["Hookbus-Seal-Signature", signer.sign(data)],
      ["Hookbus-Seal-Key", signer.publicKey],
    ]);
    batches.push(toStoredBatch(index, data, { get: (n) => headers.get(n) ?? "" }, new Date()));
    prevBatch = bytesHash(data);
  }
  return batches;
}

function analyse(
  batches: ReturnType<typeof seal>,
  items: LogItem[],
  options: Partial<AnalyserOptions> = {},
) {
  const a = new SealAnalyser({ namespace: NS, keys: [key.publicKey], ...options });
  let i = 0;
  for (const b of batches) {
    a.addBatch(b);
    while (i < items.length && items[i]!.seq <= (b.batch?.toSeq ?? 0)) a.addRecord(items[i++]!);
  }
  while (i < items.length) a.addRecord(items[i++]!);
  return a.finish();
}

const items = Array.from({ length: 7 }, (_, i) => record(i + 1, i === 3 ? "block" : "allow"));
const findings = (r: ReturnType<typeof analyse>) =>
  r.findings.map((f) => ({ kind: f.kind, reason: f.reason, seq: f.seq, batch: f.batch }));

describe("the seal analyser", () => {
  it("finds nothing in a sealed log, and counts the unsealed tail apart", () => {
    const report = analyse(seal(items.slice(0, 5), 2), items);
    expect(report.findings).toEqual([]);
    expect(report).toMatchObject({ ok: true, records: 7, sealed: 5, batches: 3, sealedThrough: 5 });
    expect(report.unsealed).toMatchObject({ records: 2, fromSeq: 6 });
  });

  it("names an altered record by its sequence", () => {
    const batches = seal(items, 3);
    const altered = [...items];
    altered[4] = { ...items[4]!, data: new TextEncoder().encode("{}") };
    expect(findings(analyse(batches, altered))).toEqual([
      { kind: "altered", reason: "hash-mismatch", seq: 5, batch: 2 },
    ]);
  });

  it("names a removed record, including the last ones (truncation)", () => {
    const batches = seal(items, 3);
    const report = analyse(batches, [...items.slice(0, 2), ...items.slice(3, 5)]);
    expect(findings(report)).toEqual([
      { kind: "removed", reason: "missing", seq: 3, batch: 1 },
      { kind: "removed", reason: "missing", seq: 6, batch: 2 },
      { kind: "removed", reason: "missing", seq: 7, batch: 3 },
    ]);
  });

  it("names a blocked record filed under …allow", () => {
    const batches = seal(items, 7);
    const moved = [...items];
    moved[3] = { ...items[3]!, subject: items[3]!.subject.replace(/block$/, "allow") };
    expect(findings(analyse(batches, moved))).toEqual([
      { kind: "re-subjected", reason: "subject-mismatch", seq: 4, batch: undefined },
      { kind: "altered", reason: "hash-mismatch", seq: 4, batch: 1 },
    ]);
  });

  it("names a batch signed by another key, and a batch removed from the seal stream", () => {
    const intruder = sealKeyFromSeed(createSealKey().seed);
    const forged = seal(items, 3, intruder);
    expect(findings(analyse(forged, items)).map((f) => f.reason)).toEqual([
      "untrusted-key",
      "untrusted-key",
      "untrusted-key",
    ]);
    const batches = seal(items, 3);
    const report = analyse([batches[0]!, batches[2]!], items);
    expect(findings(report)).toContainEqual({
      kind: "seal",
      reason: "seal-chain-break",
      seq: undefined,
      batch: 3,
    });
  });

  it("checks an anchor: a batch with another hash, or none, is a finding", () => {
    const batches = seal(items, 3);
    expect(analyse(batches, items, { anchor: { batch: 2, hash: batches[1]!.hash } }).ok).toBe(true);
    expect(
      findings(analyse(batches, items, { anchor: { batch: 2, hash: "0".repeat(64) } })),
    ).toEqual([{ kind: "seal", reason: "anchor-mismatch", seq: undefined, batch: 2 }]);
    expect(
      findings(
        analyse(batches.slice(0, 1), items, { anchor: { batch: 3, hash: "0".repeat(64) } }),
      )[0],
    ).toMatchObject({ reason: "anchor-missing" });
  });
});

describe("a stalled sealer", () => {
  const t0 = Date.UTC(2026, 0, 1);
  const ms = (seconds: number) => t0 + seconds * 1000;
  const at = (seconds: number) => new Date(ms(seconds));
  /** Records 1-8 stored a second apart; batches of 4 stored at the given seconds. */
  const timed = (batchSeconds: number[]) => {
    const items = Array.from({ length: 8 }, (_, i) => ({ ...record(i + 1), storedAt: ms(i) }));
    const batches = seal(items, 4).map((b, i) => ({ ...b, storedAt: at(batchSeconds[i]!) }));
    return { items, batches };
  };
  const stalled = (report: ReturnType<typeof analyse>) =>
    report.findings.filter((f) => f.kind === "stalled").map((f) => [f.reason, f.seq]);

  it("is no finding while each batch is stored within the bound", () => {
    const { items, batches } = timed([5, 9]);
    expect(analyse(batches, items, { maxSealDelayMs: 50_000 }).ok).toBe(true);
  });

  it("names each record sealed later than the bound (the first batch, sealing old history, exempt)", () => {
    const { items, batches } = timed([500, 120]);
    const report = analyse(batches, items, { maxSealDelayMs: 50_000 });
    expect(stalled(report)).toEqual([
      ["sealed-late", 5],
      ["sealed-late", 6],
      ["sealed-late", 7],
      ["sealed-late", 8],
    ]);
    expect(report.findings.every((f) => f.kind === "stalled")).toBe(true);
    expect(report.ok).toBe(false);
  });

  it("judges the unsealed tail at the time of the check, and not at all when no sealer ever ran", () => {
    const { items, batches } = timed([5, 9]);
    const tail = [9, 10].map((n) => ({ ...record(n), storedAt: ms(100) }));
    const all = [...items, ...tail];
    expect(analyse(batches, all, { maxSealDelayMs: 50_000, now: at(140) }).ok).toBe(true);
    expect(stalled(analyse(batches, all, { maxSealDelayMs: 50_000, now: at(151) }))).toEqual([
      ["unsealed-too-long", 9],
    ]);
    expect(analyse([], all, { maxSealDelayMs: 50_000, now: at(1000) }).ok).toBe(true);
  });
});

describe("chainHash", () => {
  it("covers the previous hash, the subject and the exact bytes", () => {
    const data = new TextEncoder().encode('{"a":1}');
    const h = chainHash(null, "t.audit.a.s.h.allow", data);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(chainHash(null, "t.audit.a.s.h.block", data)).not.toBe(h);
    expect(chainHash(h, "t.audit.a.s.h.allow", data)).not.toBe(h);
    expect(chainHash(null, "t.audit.a.s.h.allow", new TextEncoder().encode('{"a": 1}'))).not.toBe(
      h,
    );
  });
});
