/**
 * Issue 32, item 2: a coordinator killed with SIGKILL leaves records it stored and answered but
 * never signed (their batch died with it). `audit verify --coordinator-keys` names them as that
 * run's crash tail and passes; a record appended later in that run's name, beyond the crash
 * window, still fails.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { verifyLog } from "../../../src/audit/verify.js";
import { bodyHeaders } from "../../../src/bus/codec.js";
import { HookbusClient } from "../../../src/index.js";
import {
  RecordSignerHeader,
  RecordSignerRunHeader,
  signatureStreamName,
  toStoredSignatureBatch,
} from "../../../src/log/sign/batch.js";
import { startSealer } from "../../../src/sealer/sealer.js";
import type { Bus } from "../../../src/bus/bus.js";
import { startChild } from "../../support/child.js";
import { until } from "../../support/wait.js";
import { startPipeline, uniqueNamespace, useNatsServer } from "../pipeline/harness.js";
import {
  guard,
  hookbus,
  issuedKeys,
  sealKey,
  sessionPipeline,
  toolCtx,
  toolEvent,
} from "./harness.js";

const nats = useNatsServer();
const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));

/** The signature batches stored so far, parsed. */
async function batches(bus: Bus) {
  const stream = signatureStreamName(bus.subjects);
  const info = await bus.jsm.streams.info(stream).catch(() => undefined);
  const out = [];
  for (let seq = 1; seq <= (info?.state.last_seq ?? 0); seq++) {
    const msg = (await bus.jsm.streams.getMessage(stream, { seq }))!;
    const stored = toStoredSignatureBatch(seq, msg.data, msg.header, 0);
    out.push({ ...stored.batch!, storedAt: msg.time.getTime() });
  }
  return out;
}

describe("a coordinator killed with SIGKILL", () => {
  it("leaves a crash tail that verify names and passes; a later append in its name fails", async () => {
    const keys = issuedKeys();
    // The pipeline's in-process coordinator is stopped: the CLI coordinator is the only one.
    const p = await startPipeline(nats.url(), {
      namespace: uniqueNamespace("crash"),
      registry: { policies: [{ name: "guard", hooks: ["before_tool_call"], priority: 10 }] },
      policies: [guard],
    });
    await p.coordinator.stop();
    const child = startChild(
      [
        cli,
        "coordinator",
        ...["--server", nats.url(), "--namespace", p.namespace, "--id", "c1"],
        ...["--sign-key-file", keys.seedFile],
      ],
      { LOG_LEVEL: "info" },
    );
    const client = await HookbusClient.connect({
      nc: p.connections.agent,
      namespace: p.namespace,
      timeoutMs: 2000,
    });
    onTestFinished(async () => {
      if (child.child.exitCode === null) child.child.kill("SIGKILL");
      await client.close();
      await p.stop();
    });
    await until(() => child.output().includes("coordinator ready"), 20_000, "CLI coordinator");
    // Started once the coordinator created the signature stream, which its check follows.
    const sealer = await startSealer({
      nc: p.bus.nc,
      namespace: p.namespace,
      key: sealKey.pair,
      maxBatch: 16,
      maxDelayMs: 20,
      coordinatorKeys: keys.trusted,
      signatureGraceMs: 300,
    });
    onTestFinished(() => sealer.stop().catch(() => {}));
    const call = (id: string) =>
      client.call("before_tool_call", toolCtx(id, "read_file"), toolEvent(id, "read_file"), {
        callId: id,
      });

    // A signed start: the killed run must have shown itself alive (its batches).
    for (const id of ["a-1", "a-2"]) await call(id);
    const stored = (await p.bus.jsm.streams.info(p.subjects.logStream)).state.last_seq;
    await until(
      async () => (await batches(p.bus)).some((b) => b.records.some(([seq]) => seq === stored)),
      10_000,
      "the start signed",
    );
    const runBatches = await batches(p.bus);
    const run = runBatches[0]!.epoch;

    // A burst, answered, then SIGKILL. A kill races the signer's 200 ms batch timer, so the
    // signature stream is held full meanwhile (the batch refused and retried in memory, as one in
    // its 200 ms is): the burst's batch dies with the process, whatever the machine's load.
    const sigStream = signatureStreamName(p.subjects);
    const sigInfo = await p.bus.jsm.streams.info(sigStream);
    await p.bus.jsm.streams.update(sigStream, { max_msgs: sigInfo.state.messages });
    const burst = Array.from({ length: 20 }, (_, i) => call(`b-${i}`));
    expect((await Promise.all(burst)).every((r) => r.decision.outcome === "allow")).toBe(true);
    child.child.kill("SIGKILL");
    await child.exited;
    await p.bus.jsm.streams.update(sigStream, { max_msgs: -1 });

    const logLast = (await p.bus.jsm.streams.info(p.subjects.logStream)).state.last_seq;
    const signed = new Set((await batches(p.bus)).flatMap((b) => b.records.map(([s]) => s)));
    const unsigned: number[] = [];
    for (let seq = 1; seq <= logLast; seq++) if (!signed.has(seq)) unsigned.push(seq);
    expect(unsigned).toHaveLength(20); // the issue: records answered, whose batch died

    const verify = (crashWindowMs?: number) =>
      verifyLog(p.bus, {
        keys: [sealKey.publicKey],
        coordinatorKeys: keys.trusted,
        signatureGraceMs: 300,
        ...(crashWindowMs === undefined ? {} : { crashWindowMs }),
      });
    const report = await until(
      async () => {
        const r = await verify();
        return r.recordSignatures!.pending === 0 && r.unsealed.records === 0 && r;
      },
      10_000,
      "past the grace, all sealed",
    );
    expect(report.findings).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.crashTails).toHaveLength(1);
    expect(report.crashTails![0]).toMatchObject({ coordinator: "c1", run, seqs: unsigned });

    // The sealer's early warning applies the same rule: counted apart, not as unsigned.
    const sealerCounts = async () =>
      JSON.stringify(
        (await sealer.metrics.getMetricsAsJSON())
          .find((m) => m.name === "hookbus_seal_signature_findings_total")!
          .values.map((v) => [v.labels.reason, v.value]),
      );
    await until(
      async () => (await sealerCounts()) === '[["crash-tail",20]]',
      10_000,
      `the sealer counts the crash tail (${await sealerCounts()})`,
    );

    const run1 = await hookbus(
      nats.url(),
      p.namespace,
      "audit",
      "verify",
      ...["--key", sealKey.publicKey, "--coordinator-keys", keys.trustedFile],
      ...["--signature-grace", "300"],
    );
    expect(run1.code, run1.stdout).toBe(0);
    expect(run1.stdout).toMatch(/^crash tail: coordinator c1 .*run .*: 20 record\(s\)/m);
    // An operator who accepts no crash tail: every one of them is a finding.
    const strict = await hookbus(
      nats.url(),
      p.namespace,
      "audit",
      "verify",
      ...["--key", sealKey.publicKey, "--coordinator-keys", keys.trustedFile],
      ...["--signature-grace", "300", "--crash-window", "0", "--json"],
    );
    expect(strict.code).toBe(1);
    const strictReport = JSON.parse(strict.stdout) as typeof report;
    expect(strictReport.findings.map((f) => [f.reason, f.seq])).toEqual(
      unsigned.map((seq) => ["unsigned-record", seq]),
    );

    // A record appended in the dead run's name, past the crash window: forged, and named.
    const last = Math.max(...(await batches(p.bus)).map((b) => b.storedAt));
    const windowMs = 1500;
    await until(() => Date.now() > last + windowMs + 100, 5000, "past the crash window");
    const forged = await appendInRun(p.bus, keys.key.publicKey, run);
    const after = await until(
      async () => {
        const r = await verify(windowMs);
        return r.recordSignatures!.pending === 0 && r.unsealed.records === 0 && r;
      },
      10_000,
      "the forged record past the grace",
    );
    expect(after.findings.map((f) => [f.reason, f.seq])).toEqual([["unsigned-record", forged]]);
    expect(after.findings[0]!.message).toMatch(/beyond the crash window/);
    expect(after.crashTails![0]!.seqs).toEqual(unsigned);
  });
});

describe("a coordinator stopped cleanly", () => {
  it("has no crash window: a record appended in its run's name right after is unsigned", async () => {
    const keys = issuedKeys();
    const { p } = await sessionPipeline(nats.url(), {
      calls: 2,
      coordinator: { signingKey: keys.key, id: "c1" },
    });
    await p.coordinator.stop();
    const all = await batches(p.bus);
    expect(all.at(-1)!.last).toBe(true);
    const forged = await appendInRun(p.bus, keys.key.publicKey, all[0]!.epoch);
    const report = await until(
      async () => {
        const r = await verifyLog(p.bus, { coordinatorKeys: keys.trusted, signatureGraceMs: 300 });
        return r.recordSignatures!.pending === 0 && r;
      },
      10_000,
      "past the grace",
    );
    expect(report.findings.map((f) => [f.reason, f.seq])).toEqual([["unsigned-record", forged]]);
    expect(report.findings[0]!.message).toMatch(/stopped cleanly/);
    expect(report.crashTails).toEqual([]);
  });
});

/** A decision record appended beside hookbus, claiming the coordinator's key and run. */
async function appendInRun(bus: Bus, key: string, run: string): Promise<number> {
  const { AGENT, SESSION } = await import("./harness.js");
  const record = {
    v: 1,
    kind: "decision",
    callId: "forged-in-run",
    hook: "before_tool_call",
    context: { agentId: AGENT, sessionKey: SESSION, runId: "run-1", toolName: "exec" },
    event: { toolName: "exec", toolCallId: "forged-in-run", params: {} },
    outcomes: [],
    decision: { outcome: "allow" },
    registryRevision: 1,
    receivedAt: new Date().toISOString(),
    decidedAt: new Date().toISOString(),
    coordinator: "c1",
  };
  const encoded = await bus.codec.encode(record);
  const headers = bodyHeaders(encoded, { [RecordSignerHeader]: key, [RecordSignerRunHeader]: run });
  const subject = bus.subjects.audit(AGENT, SESSION, "before_tool_call", "allow");
  return (await bus.js.publish(subject, encoded.data, { headers })).seq;
}
