/**
 * Signed decisions (issue 21 item 7): coordinators sign what they append with the key `hookbus
 * auth` issued them; a record appended by anyone else with write access to the log is sealed like
 * any record (the sealer cannot tell), but `audit verify` given the trusted coordinator keys
 * names it, while an honest run verifies clean.
 */
import { statSync } from "node:fs";
import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { verifyLog } from "../../../src/audit/verify.js";
import { bodyHeaders } from "../../../src/bus/codec.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";
import {
  RecordSignerHeader,
  recordHash,
  signatureStreamName,
  toStoredSignatureBatch,
} from "../../../src/log/sign/batch.js";
import { SignatureVerifier } from "../../../src/log/sign/keys.js";
import { RecordSigner } from "../../../src/coordinator/record-signer.js";
import { Bus } from "../../../src/bus/bus.js";
import { bytesHash } from "../../../src/log/seal/hash.js";
import { pino } from "pino";
import { until } from "../../support/wait.js";
import { useNatsServer, uniqueNamespace } from "../pipeline/harness.js";
import {
  AGENT,
  SESSION,
  hookbus,
  issuedKeys,
  sealKey,
  sealedUpToNow,
  sessionPipeline,
} from "./harness.js";
import { startSealer } from "../../../src/sealer/sealer.js";

const nats = useNatsServer();

/** A signed session of 9 records, sealed, every record covered by its coordinator's batch. */
async function signedSession(keys: ReturnType<typeof issuedKeys>) {
  const { p } = await sessionPipeline(nats.url(), {
    calls: 4,
    coordinator: { signingKey: keys.key, id: "c1" },
  });
  // The sealer checks signatures too (an early warning), with a short grace for the test.
  const sealer = await startSealer({
    nc: p.bus.nc,
    namespace: p.namespace,
    key: sealKey.pair,
    maxBatch: 4,
    maxDelayMs: 20,
    coordinatorKeys: keys.trusted,
    signatureGraceMs: 500,
  });
  await until(
    async () => {
      const r = await verifyLog(p.bus, {
        keys: [sealKey.publicKey],
        coordinatorKeys: keys.trusted,
      });
      return r.recordSignatures!.signed === r.records && r.unsealed.records === 0 && r;
    },
    10_000,
    "every record sealed and signed",
  );
  const cli = (...extra: string[]) =>
    hookbus(
      nats.url(),
      p.namespace,
      "audit",
      "verify",
      "--key",
      sealKey.publicKey,
      "--coordinator-keys",
      keys.trustedFile,
      ...extra,
    );
  const close = async () => {
    await sealer.stop();
    await p.stop();
  };
  const sealerFindings = async () =>
    (await sealer.metrics.getMetricsAsJSON())
      .find((m) => m.name === "hookbus_seal_signature_findings_total")!
      .values.map((v) => [v.labels.reason, v.value]);
  return { p, cli, close, sealerFindings };
}

/** A record shaped like the coordinator's, appended by a connection that is no coordinator. */
async function appendForged(bus: Bus, callId: string, signer?: string): Promise<number> {
  const record = {
    v: 1,
    kind: "decision",
    callId,
    hook: "before_tool_call",
    context: {
      agentId: AGENT,
      sessionKey: SESSION,
      runId: "run-1",
      toolName: "exec",
      toolCallId: callId,
    },
    event: { toolName: "exec", toolCallId: callId, params: {} },
    outcomes: [],
    decision: { outcome: "allow" },
    registryRevision: 1,
    receivedAt: new Date().toISOString(),
    decidedAt: new Date().toISOString(),
    coordinator: "c1",
  };
  const encoded = await bus.codec.encode(record);
  const headers = bodyHeaders(
    encoded,
    signer === undefined ? {} : { [RecordSignerHeader]: signer },
  );
  const subject = bus.subjects.audit(AGENT, SESSION, "before_tool_call", "allow");
  const ack = await bus.js.publish(subject, encoded.data, { headers });
  return ack.seq;
}

describe("signed decisions", () => {
  it("hookbus auth issues each coordinator a private seed (0600) and a trusted list", () => {
    const keys = issuedKeys();
    expect(statSync(keys.seedFile).mode & 0o777).toBe(0o600);
    expect(keys.trusted).toEqual([keys.key.publicKey]);
  });

  it("an honest signed run verifies clean, every record signed", async () => {
    const keys = issuedKeys();
    const s = await signedSession(keys);
    try {
      const run = await s.cli();
      expect(run.code, run.stdout).toBe(0);
      expect(run.stdout).toMatch(/signatures: 9 record\(s\) signed by 1 trusted coordinator key/);
      expect(run.stdout).toMatch(/^OK: 9 record/m);
      expect(await s.sealerFindings()).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it("a record appended by a non-coordinator is sealed, passes the seal check, and fails verify", async () => {
    const keys = issuedKeys();
    const s = await signedSession(keys);
    try {
      const plain = await appendForged(s.p.bus, "forged-1");
      // The header names the honest coordinator's key: it only buys the grace, not a signature.
      const claimed = await appendForged(s.p.bus, "forged-2", keys.key.publicKey);
      await sealedUpToNow(s.p.bus);
      const sealOnly = await verifyLog(s.p.bus, { keys: [sealKey.publicKey] });
      expect(sealOnly.findings).toEqual([]);
      expect(sealOnly.ok).toBe(true);

      const report = await until(
        async () => {
          const r = await verifyLog(s.p.bus, {
            keys: [sealKey.publicKey],
            coordinatorKeys: keys.trusted,
            signatureGraceMs: 500,
          });
          return r.findings.length === 2 && r;
        },
        10_000,
        "both forgeries named",
      );
      expect(report.findings.map((f) => [f.kind, f.reason, f.seq])).toEqual([
        ["signature", "unsigned-record", plain],
        ["signature", "unsigned-record", claimed],
      ]);
      const run = await s.cli("--signature-grace", "500");
      expect(run.code).toBe(1);
      // The sealer sealed both, and warned of both.
      await until(
        async () => JSON.stringify(await s.sealerFindings()) === '[["unsigned-record",2]]',
        10_000,
        "the sealer counts both forgeries",
      );
      expect(run.stdout).toMatch(/2 about coordinator signatures/);
    } finally {
      await s.close();
    }
  });

  it("a genuine batch's signature put on a batch listing a forged record is named", async () => {
    const keys = issuedKeys();
    const s = await signedSession(keys);
    try {
      const stream = `${s.p.namespace.toUpperCase()}_SIGNATURES`;
      const subject = `${s.p.namespace}.signatures`;
      const first = (await s.p.bus.jsm.streams.getMessage(stream, { seq: 1 }))!;
      const signature = first.header.get("Hookbus-Batch-Signature");
      const signed = () => {
        const h = natsHeaders();
        h.set("Hookbus-Batch-Signature", signature);
        h.set("Hookbus-Batch-Key", keys.key.publicKey);
        return h;
      };
      // The same signature on a batch that lists a forged record instead.
      const forged = await appendForged(s.p.bus, "forged-3", keys.key.publicKey);
      const body = JSON.parse(new TextDecoder().decode(first.data)) as {
        records: [number, string][];
      };
      body.records = [[forged, "0".repeat(64)]];
      await s.p.bus.js.publish(subject, new TextEncoder().encode(JSON.stringify(body)), {
        headers: signed(),
      });
      // Its header buys the forged record the grace; past it, it is unsigned.
      const report = await until(
        async () => {
          const r = await verifyLog(s.p.bus, {
            keys: [sealKey.publicKey],
            coordinatorKeys: keys.trusted,
            signatureGraceMs: 500,
          });
          return r.recordSignatures!.pending === 0 && r;
        },
        10_000,
        "the forged record past its grace",
      );
      expect(report.findings.map((f) => [f.reason, f.seq])).toEqual([
        ["bad-signature", undefined],
        ["unsigned-record", forged],
      ]);
    } finally {
      await s.close();
    }
  });

  it("a coordinator told to require signing refuses to start without a key", async () => {
    const nc: NatsConnection = await connect({ servers: nats.url() });
    try {
      await expect(
        startCoordinator({ nc, namespace: uniqueNamespace("s"), requireSigning: true }),
      ).rejects.toMatchObject({ code: "HOOKBUS_SIGN_KEY_INVALID" });
    } finally {
      await nc.drain();
    }
  });

  it("hookbus coordinator --require-signing without a key exits before connecting, with the code", async () => {
    const run = await hookbus(nats.url(), uniqueNamespace("s"), "coordinator", "--require-signing");
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/HOOKBUS_SIGN_KEY_INVALID/);
  });

  it("the signer batches by count and by time, links each run's batches, and signs each", async () => {
    const nc = await connect({ servers: nats.url() });
    try {
      const bus = await Bus.open(nc, { namespace: uniqueNamespace("s") });
      const keys = issuedKeys();
      const signer = await RecordSigner.start({
        bus,
        key: keys.key,
        coordinatorId: "c1",
        logger: pino({ level: "silent" }),
        maxRecords: 4,
        maxDelayMs: 50,
      });
      const data = (n: number) => new TextEncoder().encode(`record ${n}`);
      for (let n = 1; n <= 10; n++) signer.add(n, "x.audit.a.s.h.allow", data(n));
      const stream = signatureStreamName(bus.subjects);
      // Two full batches at once, the last two records after maxDelayMs.
      await until(
        async () => (await bus.jsm.streams.info(stream)).state.messages === 3,
        5000,
        "3 batches",
      );
      const verifier = new SignatureVerifier(keys.trusted);
      let prev: string | null = null;
      for (let seq = 1; seq <= 3; seq++) {
        const msg = (await bus.jsm.streams.getMessage(stream, { seq }))!;
        const stored = toStoredSignatureBatch(seq, msg.data, msg.header, 0);
        expect(verifier.verify(stored.key!, stored.data, stored.signature!)).toBe(true);
        expect(stored.batch).toMatchObject({ index: seq, prev, coordinator: "c1" });
        expect(stored.batch!.records.map(([n]) => n)).toEqual(
          [
            [1, 2, 3, 4],
            [5, 6, 7, 8],
            [9, 10],
          ][seq - 1],
        );
        expect(stored.batch!.records[0]![1]).toBe(
          recordHash("x.audit.a.s.h.allow", data(stored.batch!.records[0]![0])),
        );
        prev = bytesHash(msg.data);
      }
      await signer.stop();
    } finally {
      await nc.drain();
    }
  });

  it("an idle signer stores heartbeats (empty batches) in its chain, and a clean stop a last batch", async () => {
    const nc = await connect({ servers: nats.url() });
    try {
      const bus = await Bus.open(nc, { namespace: uniqueNamespace("s") });
      const keys = issuedKeys();
      const signer = await RecordSigner.start({
        bus,
        key: keys.key,
        coordinatorId: "c1",
        logger: pino({ level: "silent" }),
        maxDelayMs: 20,
        heartbeatMs: 200,
      });
      signer.add(1, "x.audit.a.s.h.allow", new TextEncoder().encode("record 1"));
      const stream = signatureStreamName(bus.subjects);
      const count = async () => (await bus.jsm.streams.info(stream)).state.messages;
      await until(async () => (await count()) >= 3, 5000, "a batch, then two heartbeats");
      await signer.stop();
      const total = await count();
      const verifier = new SignatureVerifier(keys.trusted);
      let prev: string | null = null;
      const bodies = [];
      for (let seq = 1; seq <= total; seq++) {
        const msg = (await bus.jsm.streams.getMessage(stream, { seq }))!;
        const stored = toStoredSignatureBatch(seq, msg.data, msg.header, 0);
        expect(verifier.verify(stored.key!, stored.data, stored.signature!)).toBe(true);
        expect(stored.batch).toMatchObject({ index: seq, prev, epoch: signer.epoch });
        prev = bytesHash(msg.data);
        bodies.push(stored.batch!);
      }
      expect(bodies[0]!.records.map(([n]) => n)).toEqual([1]);
      // Heartbeats between, never while something waits to be signed.
      expect(bodies.slice(1).every((b) => b.records.length === 0)).toBe(true);
      expect(bodies.map((b) => b.last ?? false)).toEqual([
        ...Array<boolean>(total - 1).fill(false),
        true,
      ]);
    } finally {
      await nc.drain();
    }
  });
});
