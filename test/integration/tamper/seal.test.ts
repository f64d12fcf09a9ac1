/**
 * The sealer on a real server: it seals every record of a session in signed, linked batches;
 * a clean log verifies (library and CLI, exit 0); records past the last seal are reported as
 * unsealed, not as tampering; and a standby sealer takes over without forking the seal stream.
 */
import { describe, expect, it } from "vitest";
import { SealBatch } from "../../../src/log/seal/batch.js";
import { connectTo } from "../../support/nats.js";
import { useNatsServer } from "../pipeline/harness.js";
import { auditedSession, publishRaw, run, sealKey, sealedUpToNow, SESSION } from "./harness.js";
import { readSealLag } from "../../../src/sealer/lag.js";
import { sealStreamName } from "../../../src/log/seal/batch.js";
import { startSealer } from "../../../src/sealer/sealer.js";
import { verifyLog } from "../../../src/audit/verify.js";

const nats = useNatsServer();

describe("the sealer", () => {
  it("seals every record in signed batches; verify is clean and the CLI exits 0", async () => {
    const { p, entries, sealer, verify } = await auditedSession(nats.url(), {
      calls: 4,
      editable: false,
    });
    const report = await verifyLog(p.bus, { keys: [sealKey.publicKey] });
    expect(report.findings).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.records).toBe(entries.length);
    expect(report.sealed).toBe(entries.length);
    expect(report.unsealed.records).toBe(0);
    expect(report.batches).toBeGreaterThanOrEqual(Math.ceil(entries.length / 4));
    const lag = sealer!.lag();
    expect(lag).toMatchObject({ records: 0, active: true });
    expect(lag.sealedSeq).toBe(entries.at(-1)!.seq);

    // Each batch is on the seal stream as a valid SealBatch naming its session's records.
    const first = await p.bus.jsm.streams.getMessage(sealStreamName(p.subjects), { seq: 1 });
    const batch = SealBatch.parse(first!.json());
    expect(batch).toMatchObject({ index: 1, prev: null, fromSeq: 1 });

    const cli = await verify();
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^OK: 9 record\(s\) .* 9 checked against \d+ seal batch/m);
    const bySession = await verify("--session", SESSION);
    expect(bySession.code).toBe(0);
  });

  it("reports records newer than the last seal as unsealed, not as tampering", async () => {
    const { p, entries, verify } = await auditedSession(nats.url(), {
      calls: 1,
      editable: false,
      sealed: false,
    });
    const report = await verifyLog(p.bus, { keys: [sealKey.publicKey] });
    expect(report.ok).toBe(true);
    expect(report.unsealed).toMatchObject({ records: entries.length, fromSeq: entries[0]!.seq });
    const cli = await verify();
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(
      /UNSEALED: no seal batch .* the log predates the sealer or no sealer has run/,
    );
    expect((await readSealLag(p.bus)).records).toBe(entries.length);
  });

  it("one of two sealers seals; the standby takes over when it stops, and the seal stream stays one chain", async () => {
    const { p, addSealer } = await auditedSession(nats.url(), {
      calls: 2,
      editable: false,
      sealed: false,
    });
    const a = await addSealer({ id: "sealer-a", leaseTtlMs: 1000 });
    const b = await addSealer({ id: "sealer-b", leaseTtlMs: 1000 });
    await sealedUpToNow(p.bus);
    expect([a.lag().active, b.lag().active].filter(Boolean)).toHaveLength(1);
    const [active, standby] = a.lag().active ? [a, b] : [b, a];
    await active.stop();
    for (let i = 0; i < 3; i++) {
      await p.client.call("before_response_emit", run(), {
        content: `more ${i}`,
        allContent: [],
      });
    }
    await sealedUpToNow(p.bus);
    expect(standby.lag().active).toBe(true);
    const report = await verifyLog(p.bus, { keys: [sealKey.publicKey] });
    expect(report.findings).toEqual([]);
    expect(report.unsealed.records).toBe(0);
  });

  it("seals a log written before the sealer (records with per-record chain fields) and verify says so", async () => {
    const { p, entries, addSealer, verify } = await auditedSession(nats.url(), {
      calls: 1,
      editable: false,
      sealed: false,
    });
    // Records as the pre-sealer coordinators wrote them: a `chain` link in each.
    const model = entries[0]!;
    for (let i = 1; i <= 3; i++) {
      await publishRaw(p.bus, model.subject, {
        ...model.raw,
        callId: `legacy-${i}`,
        chain: { index: i, prev: i === 1 ? null : "a".repeat(64), hash: "b".repeat(64) },
      });
    }
    await addSealer();
    await sealedUpToNow(p.bus);
    const report = await verifyLog(p.bus, { keys: [sealKey.publicKey] });
    expect(report.findings).toEqual([]);
    expect(report.legacyChained).toBe(3);
    const cli = await verify();
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(
      /3 record\(s\) carry per-record chain fields from before the sealer/,
    );
  });

  it("a standby takes over when the active sealer dies without giving up its lease", async () => {
    const { p, addSealer } = await auditedSession(nats.url(), {
      calls: 1,
      editable: false,
      sealed: false,
    });
    const doomedNc = await connectTo(nats.url(), "doomed-sealer");
    const doomed = await startSealer({
      nc: doomedNc,
      namespace: p.namespace,
      key: sealKey.pair,
      leaseTtlMs: 800,
      maxDelayMs: 20,
    });
    await sealedUpToNow(p.bus);
    const standby = await addSealer({ id: "standby", leaseTtlMs: 800 });
    try {
      expect(doomed.lag().active).toBe(true);
      expect(standby.lag().active).toBe(false);
      await doomedNc.close(); // as if killed: the lease is never released
      await p.client.call("before_response_emit", run(), { content: "after", allContent: [] });
      await sealedUpToNow(p.bus);
      expect(standby.lag().active).toBe(true);
      const report = await verifyLog(p.bus, { keys: [sealKey.publicKey] });
      expect(report.findings).toEqual([]);
      expect(report.unsealed.records).toBe(0);
    } finally {
      await doomed.stop().catch(() => {});
    }
  });
});
