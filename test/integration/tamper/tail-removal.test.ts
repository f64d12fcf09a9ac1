/**
 * Issue 31, item 1: the newest records removed without a trace. An attacker who can write the
 * sealer's lease and delete and re-create the log stream holds the lease (so nothing gets
 * sealed), lets a blocked `exec` be stored and signed, re-creates the log without it, and puts
 * the lease back as it was. The seals cover only what is left; the coordinator's signature batch
 * still lists the removed sequence, and `audit verify --coordinator-keys` must name it: beyond
 * the log's end at first, and as a sequence signed twice once the next call reuses it.
 */
import { Kvm } from "@nats-io/kv";
import { describe, expect, it, onTestFinished } from "vitest";
import { verifyLog, type VerifyReport } from "../../../src/audit/verify.js";
import { signatureStreamName, toStoredSignatureBatch } from "../../../src/log/sign/batch.js";
import { createSealKey, sealKeyFromSeed } from "../../../src/log/seal/keys.js";
import { leaseBucketName, leaseClaimBytes } from "../../../src/sealer/lease.js";
import { startSealer } from "../../../src/sealer/sealer.js";
import type { Bus } from "../../../src/bus/bus.js";
import { until } from "../../support/wait.js";
import { useNatsServer } from "../pipeline/harness.js";
import {
  hookbus,
  issuedKeys,
  rewriteStream,
  sealKey,
  sealedUpToNow,
  sessionPipeline,
  toolCtx,
  toolEvent,
} from "./harness.js";

const nats = useNatsServer();

/** The sequences the signature stream's batches list, all of them. */
async function signedSeqs(bus: Bus): Promise<number[]> {
  const stream = signatureStreamName(bus.subjects);
  const last = (await bus.jsm.streams.info(stream)).state.last_seq;
  const seqs: number[] = [];
  for (let seq = 1; seq <= last; seq++) {
    const msg = (await bus.jsm.streams.getMessage(stream, { seq }))!;
    const stored = toStoredSignatureBatch(seq, msg.data, msg.header, 0);
    seqs.push(...(stored.batch?.records.map(([s]) => s) ?? []));
  }
  return seqs;
}

describe("a removed tail of the log", () => {
  it("is named by audit verify with the coordinator keys, before and after its sequence is reused", async () => {
    const keys = issuedKeys();
    const { p } = await sessionPipeline(nats.url(), {
      calls: 1,
      coordinator: { signingKey: keys.key, id: "c1" },
    });
    const sealer = await startSealer({
      nc: p.bus.nc,
      namespace: p.namespace,
      key: sealKey.pair,
      maxBatch: 4,
      maxDelayMs: 20,
      leaseTtlMs: 1000,
    });
    onTestFinished(async () => {
      await sealer.stop();
      await p.stop();
    });
    await sealedUpToNow(p.bus);
    const kept = (await p.bus.jsm.streams.info(p.subjects.logStream)).state.last_seq;
    await until(async () => (await signedSeqs(p.bus)).includes(kept), 10_000, "all signed");

    // 1. The attacker takes the lease (a key of its own, signed by it): the sealer stands off.
    const kv = await new Kvm(p.bus.nc).open(leaseBucketName(p.subjects));
    const honestLease = (await kv.get("lease"))!.string();
    const intruder = sealKeyFromSeed(createSealKey().seed);
    const hold = Date.now() + 60_000;
    await kv.put(
      "lease",
      JSON.stringify({
        holder: "evil",
        until: hold,
        key: intruder.publicKey,
        sig: intruder.sign(leaseClaimBytes(p.namespace, "evil", hold)),
      }),
    );
    await until(() => !sealer.lag().active, 5000, "the honest sealer lost its lease");

    // 2. A blocked exec is stored, answered and signed, never sealed.
    const blocked = await p.client.call(
      "before_tool_call",
      toolCtx("tc-x", "exec"),
      toolEvent("tc-x", "exec"),
      { callId: "call-exec" },
    );
    expect(blocked.decision.outcome).toBe("block");
    const removed = (await p.bus.jsm.streams.info(p.subjects.logStream)).state.last_seq;
    expect(removed).toBe(kept + 1);
    await until(async () => (await signedSeqs(p.bus)).includes(removed), 10_000, "exec signed");

    // 3. The log is re-created without it, and the honest sealer's own (expired) lease put back.
    await rewriteStream(p.bus, p.subjects.logStream, (messages) => messages.slice(0, kept));
    await kv.put("lease", honestLease);
    await until(() => sealer.lag().active, 10_000, "the honest sealer holds the lease again");
    await sealedUpToNow(p.bus);

    const verify = async (): Promise<{ code: number; report: VerifyReport }> => {
      const run = await hookbus(
        nats.url(),
        p.namespace,
        "audit",
        "verify",
        "--json",
        "--key",
        sealKey.publicKey,
        "--coordinator-keys",
        keys.trustedFile,
      );
      return { code: run.code, report: JSON.parse(run.stdout) as VerifyReport };
    };
    // The seals alone see nothing: everything left is sealed and intact.
    expect((await verifyLog(p.bus, { keys: [sealKey.publicKey] })).ok).toBe(true);
    const cut = await verify();
    expect(cut.code).toBe(1);
    expect(cut.report.findings.map((f) => [f.kind, f.reason, f.seq])).toEqual([
      ["removed", "signed-record-missing", removed],
    ]);

    // 4. The next call lands on the removed sequence: signed again, for another record.
    await p.client.call(
      "before_tool_call",
      toolCtx("tc-y", "read_file"),
      toolEvent("tc-y", "read_file"),
      { callId: "call-next" },
    );
    expect((await p.bus.jsm.streams.info(p.subjects.logStream)).state.last_seq).toBe(removed);
    await until(
      async () => (await signedSeqs(p.bus)).filter((s) => s === removed).length === 2,
      10_000,
      "the reused sequence signed",
    );
    await sealedUpToNow(p.bus);
    const reused = await verify();
    expect(reused.code).toBe(1);
    expect(reused.report.findings.map((f) => [f.kind, f.reason, f.seq])).toEqual([
      ["removed", "signed-twice", removed],
    ]);
  });

  it("a lease the attacker released, or deleted, stays a finding (no trusted sealer wrote it last)", async () => {
    const { p } = await sessionPipeline(nats.url(), { calls: 1 });
    const sealer = await startSealer({
      nc: p.bus.nc,
      namespace: p.namespace,
      key: sealKey.pair,
      maxBatch: 4,
      maxDelayMs: 20,
    });
    onTestFinished(async () => {
      await sealer.stop().catch(() => {});
      await p.stop();
    });
    await sealedUpToNow(p.bus);
    await sealer.stop(); // an honest release: signed by the trusted key, no finding
    const lease = async () =>
      (await verifyLog(p.bus, { keys: [sealKey.publicKey] })).findings
        .filter((f) => f.kind === "lease")
        .map((f) => f.reason);
    expect(await lease()).toEqual([]);
    const kv = await new Kvm(p.bus.nc).open(leaseBucketName(p.subjects));
    await kv.put("lease", JSON.stringify({ holder: "evil", until: 0 }));
    expect(await lease()).toEqual(["unkeyed-lease"]);
    await kv.delete("lease");
    expect(await lease()).toEqual(["lease-removed"]);
    await kv.destroy();
    expect(await lease()).toEqual(["lease-removed"]);
  });
});
