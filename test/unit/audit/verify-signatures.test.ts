/**
 * The coordinator-signature check of `audit verify`, fed by hand, as an attacker with write
 * access to the log and the signature stream (but no coordinator seed) would shape its input.
 */
import { describe, expect, it } from "vitest";
import { bytesHash } from "../../../src/log/seal/hash.js";
import {
  SIGNATURE_VERSION,
  recordHash,
  toStoredSignatureBatch,
  type SignatureBatch,
} from "../../../src/log/sign/batch.js";
import { createSigningKey, signingKeyFromSeed } from "../../../src/log/sign/keys.js";
import { RecordSignatureCheck } from "../../../src/audit/verify-signatures.js";
import type { LogItem } from "../../../src/audit/verify-read.js";

const NS = "ns";
const honest = signingKeyFromSeed(createSigningKey().seed);
const other = signingKeyFromSeed(createSigningKey().seed);
const NOW = 1_000_000;
const GRACE = 60_000;

function item(seq: number, text = `record ${seq}`, over: Partial<LogItem> = {}): LogItem {
  return {
    seq,
    subject: `${NS}.audit.a.s.before_tool_call.decided`,
    data: new TextEncoder().encode(text),
    storedAt: NOW - 2 * GRACE,
    signer: honest.publicKey,
    ...over,
  };
}

let streamSeq = 0;
function batch(
  items: LogItem[],
  key = honest,
  over: Partial<SignatureBatch> = {},
  signWith = key,
  storedAt = NOW - 2 * GRACE,
) {
  const body: SignatureBatch = {
    v: SIGNATURE_VERSION,
    namespace: NS,
    coordinator: "c1",
    epoch: "e1",
    index: 1,
    prev: null,
    records: items.map((i) => [i.seq, recordHash(i.subject, i.data)]),
    signedAt: new Date(NOW).toISOString(),
    ...over,
  };
  const data = new TextEncoder().encode(JSON.stringify(body));
  const headers = new Map([
    ["Hookbus-Batch-Signature", signWith.sign(data)],
    ["Hookbus-Batch-Key", key.publicKey],
  ]);
  const stored = toStoredSignatureBatch(
    ++streamSeq,
    data,
    { get: (n) => headers.get(n) ?? "" },
    storedAt,
  );
  return { stored, hash: bytesHash(data) };
}

function check(filtered = false) {
  return new RecordSignatureCheck({
    namespace: NS,
    keys: [honest.publicKey],
    graceMs: GRACE,
    now: NOW,
    filtered,
    logFirstSeq: 1,
  });
}

const reasons = (fs: { reason: string; seq?: number }[]) =>
  fs.map((f) => (f.seq === undefined ? f.reason : `${f.reason}@${f.seq}`));

describe("coordinator signatures in audit verify", () => {
  it("passes records a trusted coordinator signed, exactly as stored", () => {
    const c = check();
    const items = [item(1), item(2), item(3)];
    const b = batch(items);
    expect(c.addBatch(b.stored, b.hash)).toEqual([]);
    expect(items.flatMap((i) => c.checkRecord(i))).toEqual([]);
    const done = c.finish();
    expect(done.findings).toEqual([]);
    expect(done.stats).toMatchObject({ signed: 3, pending: 0, batches: 1 });
  });

  it("names a record no coordinator signed, with or without a forged signer header", () => {
    const c = check();
    const b = batch([item(1)]);
    c.addBatch(b.stored, b.hash);
    const found = [
      ...c.checkRecord(item(1)),
      ...c.checkRecord(item(2, "forged", { signer: undefined })),
      ...c.checkRecord(item(3, "forged too")),
    ];
    expect(reasons(found)).toEqual(["unsigned-record@2", "unsigned-record@3"]);
  });

  it("a young record with a signer header waits for its batch; one without is unsigned at once", () => {
    const c = check();
    const young = { storedAt: NOW - 1000 };
    expect(c.checkRecord(item(1, "x", young))).toEqual([]);
    expect(reasons(c.checkRecord(item(2, "y", { ...young, signer: undefined })))).toEqual([
      "unsigned-record@2",
    ]);
    expect(c.finish().stats.pending).toBe(1);
  });

  it("another record under a signed sequence, or a signature replayed onto other bytes, is bad-signature", () => {
    const c = check();
    const b = batch([item(1), item(2)]);
    c.addBatch(b.stored, b.hash);
    const moved = { subject: `${NS}.audit.b.s.before_tool_call.decided` };
    expect(
      reasons([...c.checkRecord(item(1, "altered")), ...c.checkRecord(item(2, "record 2", moved))]),
    ).toEqual(["bad-signature@1", "bad-signature@2"]);
  });

  it("a batch signed with a key that is not trusted, or whose signature does not verify", () => {
    const c = check();
    const untrusted = batch([item(1)], other);
    // The honest key's name on a batch the attacker signed with another key.
    const forged = batch([item(2)], honest, { epoch: "e2" }, other);
    expect(reasons(c.addBatch(untrusted.stored, untrusted.hash))).toEqual(["untrusted-key"]);
    expect(reasons(c.addBatch(forged.stored, forged.hash))).toEqual(["bad-signature"]);
    expect(reasons([...c.checkRecord(item(1)), ...c.checkRecord(item(2))])).toEqual([
      "untrusted-key@1",
      "unsigned-record@2",
    ]);
  });

  it("a batch edited after signing (a record moved into it) does not verify", () => {
    const c = check();
    const b = batch([item(1)]);
    const text = new TextDecoder().decode(b.stored.data).replace("[[1,", "[[7,");
    const edited = {
      ...b.stored,
      ...toStoredSignatureBatch(
        9,
        new TextEncoder().encode(text),
        { get: (n) => (n === "Hookbus-Batch-Key" ? honest.publicKey : b.stored.signature!) },
        0,
      ),
    };
    expect(reasons(c.addBatch(edited, b.hash))).toEqual(["bad-signature"]);
  });

  it("a removed batch of a coordinator run breaks its chain", () => {
    const c = check();
    const first = batch([item(1)]);
    const third = batch([item(3)], honest, { index: 3, prev: "0".repeat(64) });
    expect(c.addBatch(first.stored, first.hash)).toEqual([]);
    expect(reasons(c.addBatch(third.stored, third.hash))).toEqual(["batch-chain-break"]);
    const second = batch([item(2)], honest, { index: 2, prev: first.hash, epoch: "e9" });
    // A run first met at batch 2 lost batch 1: the stream keeps every batch.
    expect(reasons(c.addBatch(second.stored, second.hash))).toEqual(["batch-chain-break"]);
    // A retry of the same batch stored again (after the duplicate window) is no break.
    expect(c.addBatch(second.stored, second.hash)).toEqual([]);
  });

  it("a run first met past batch 1 is no break once the stream's first batches aged out", () => {
    const c = new RecordSignatureCheck({
      namespace: NS,
      keys: [honest.publicKey],
      graceMs: GRACE,
      now: NOW,
      filtered: false,
      logFirstSeq: 1,
      signatureFirstSeq: 40,
    });
    const later = batch([item(1)], honest, { index: 7, prev: "0".repeat(64), epoch: "e7" });
    expect(c.addBatch(later.stored, later.hash)).toEqual([]);
  });

  it("a signed sequence beyond the log's end is removed: the log was cut back (issue 31)", () => {
    const c = check();
    const b = batch([item(1), item(2), item(3)]);
    c.addBatch(b.stored, b.hash);
    // The log was re-created holding seqs 1-2: seq 3 is listed, and never met.
    const found = [...c.checkRecord(item(1)), ...c.checkRecord(item(2)), ...c.finish().findings];
    expect(reasons(found)).toEqual(["signed-record-missing@3"]);
  });

  it("a sequence signed for two different records is named, whichever the log holds now", () => {
    const c = check();
    const first = batch([item(1), item(2, "blocked exec")]);
    c.addBatch(first.stored, first.hash);
    // Re-created log: seq 2 reused by the next genuine record, signed in the same run.
    const reused = item(2, "a later call");
    const second = batch([reused], honest, { index: 2, prev: first.hash });
    const found = [...c.addBatch(second.stored, second.hash), ...c.checkRecord(item(1))];
    found.push(...c.checkRecord(reused), ...c.finish().findings);
    expect(found.map((f) => [f.kind, f.reason, f.seq])).toEqual([["removed", "signed-twice", 2]]);
    // The same hash signed again (a batch retried after the duplicate window) is not.
    const d = check();
    d.addBatch(first.stored, first.hash);
    const again = batch([item(2, "blocked exec")], honest, { index: 2, prev: first.hash });
    expect(d.addBatch(again.stored, again.hash)).toEqual([]);
  });

  it("a signed record the log no longer holds is removed (not on a filtered walk)", () => {
    for (const filtered of [false, true]) {
      const c = check(filtered);
      const b = batch([item(1), item(2), item(3)]);
      c.addBatch(b.stored, b.hash);
      const found = [...c.checkRecord(item(1)), ...c.checkRecord(item(3))];
      found.push(...c.finish().findings);
      expect(reasons(found)).toEqual(filtered ? [] : ["signed-record-missing@2"]);
    }
  });

  describe("crash tails (issue 32)", () => {
    const DIED = NOW - 2 * GRACE;
    const inRun = (seq: number, storedAt: number, run = "e1") =>
      item(seq, `record ${seq}`, { storedAt, signerRun: run });
    /** Run e1 signed seqs 1-2 in a batch stored at DIED; `later` are then checked. */
    function afterCrash(later: LogItem[], over: Partial<SignatureBatch> = {}) {
      const c = check();
      const b = batch([inRun(1, DIED - 50), inRun(2, DIED - 40)], honest, over, honest, DIED);
      c.addBatch(b.stored, b.hash);
      const found = [inRun(1, DIED - 50), inRun(2, DIED - 40), ...later].flatMap((i) =>
        c.checkRecord(i),
      );
      const done = c.finish();
      return { findings: reasons([...found, ...done.findings]), tails: done.crashTails };
    }

    it("records a run stored after its last batch, and never signed, are its crash tail", () => {
      const { findings, tails } = afterCrash([inRun(3, DIED + 2), inRun(5, DIED + 57)]);
      expect(findings).toEqual([]);
      expect(tails).toHaveLength(1);
      expect(tails[0]).toMatchObject({
        coordinator: "c1",
        key: honest.publicKey,
        run: "e1",
        records: 2,
        fromSeq: 3,
        toSeq: 5,
        seqs: [3, 5],
      });
    });

    it("a record claiming the run but stored beyond the window stays unsigned", () => {
      const { findings, tails } = afterCrash([inRun(3, DIED + 2), inRun(4, DIED + 10_001)]);
      expect(findings).toEqual(["unsigned-record@4"]);
      expect(tails.map((t) => t.seqs)).toEqual([[3]]);
    });

    it("a run that stopped cleanly, or signed later records, has no crash tail", () => {
      expect(afterCrash([inRun(3, DIED + 2)], { last: true }).findings).toEqual([
        "unsigned-record@3",
      ]);
      const c = check();
      const first = batch([inRun(1, DIED - 50)], honest, {}, honest, DIED);
      const second = batch(
        [inRun(3, DIED + 100)],
        honest,
        { index: 2, prev: first.hash },
        honest,
        DIED + 300,
      );
      c.addBatch(first.stored, first.hash);
      c.addBatch(second.stored, second.hash);
      const found = [inRun(1, DIED - 50), inRun(2, DIED + 10), inRun(3, DIED + 100)].flatMap((i) =>
        c.checkRecord(i),
      );
      expect(reasons([...found, ...c.finish().findings])).toEqual(["unsigned-record@2"]);
    });

    it("a record that names no run, another run, or an untrusted key is no crash tail", () => {
      const noRun = item(3, "x", { storedAt: DIED + 2 });
      const otherRun = inRun(4, DIED + 2, "e-unknown");
      const untrusted = { ...inRun(5, DIED + 2), signer: other.publicKey };
      expect(afterCrash([noRun, otherRun, untrusted]).findings).toEqual([
        "unsigned-record@3",
        "unsigned-record@5",
        "unsigned-record@4",
      ]);
    });

    it("a run that lived on well past a record without signing it leaves no crash tail", () => {
      const c = check();
      const b = batch([inRun(1, DIED - 5000)], honest, {}, honest, DIED - 4900);
      const beat = batch([], honest, { index: 2, prev: b.hash }, honest, DIED);
      c.addBatch(b.stored, b.hash);
      c.addBatch(beat.stored, beat.hash);
      const found = [inRun(1, DIED - 5000), inRun(2, DIED - 4000)].flatMap((i) => c.checkRecord(i));
      expect(reasons([...found, ...c.finish().findings])).toEqual(["unsigned-record@2"]);
    });
  });
});
