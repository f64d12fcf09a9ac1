/**
 * The sealer across crashes and outages, on a real server:
 * - a sealer process (re)started while NATS is down waits for it (`--connect-wait`) and seals
 *   once it returns: before, it exited at once with HOOKBUS_NATS_UNREACHABLE and nothing was
 *   sealed again (the chaos run's restarted-sealer stall); its `--http` endpoints serve the
 *   evidence lag, batches sealed and the lease meanwhile;
 * - heads in KV left behind by a sealer killed between storing batches and writing their heads
 *   are repaired from the seal stream by the next sealer, which never continues a session from a
 *   stale head (verify would report a `session-chain-break`).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/index.js";
import { SealBatch } from "../../../src/log/seal/batch.js";
import { sessionOfSubject } from "../../../src/log/seal/batch.js";
import { headsBucketName, THROUGH_KEY } from "../../../src/sealer/heads.js";
import { startChild } from "../../support/child.js";
import { useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { run, sealKey, sealedUpToNow, sealerFor, sessionPipeline } from "./harness.js";
import { sealStreamName } from "../../../src/log/seal/batch.js";
import { verifyLog } from "../../../src/audit/verify.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
// The first test stops and restarts its server, so the file must own it.
const nats = useNatsServer({ own: true, hookTimeoutMs: 30_000 });
let keyDir: string;
let keyFile: string;

beforeAll(async () => {
  keyDir = await mkdtemp(join(tmpdir(), "hookbus-sealer-test-"));
  keyFile = join(keyDir, "sealer.nk");
  await writeFile(keyFile, `${sealKey.seed}\n`, { mode: 0o600 });
});
afterAll(async () => {
  await rm(keyDir, { recursive: true, force: true });
});

/** The value of an unlabelled-by-us sample (`name{role="sealer",...} value`) in a metrics body. */
function sample(body: string, name: string): number | undefined {
  const line = body.split("\n").find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const get = async (url: string) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.text() };
};

describe("the sealer across crashes and outages", () => {
  it("a sealer process started while NATS is down waits for it, then seals; --http reports lag, batches and lease", async () => {
    const { p, entries } = await sessionPipeline(nats.url(), { calls: 2, editable: false });
    await p.stop();
    await nats.handle().kill();
    const sealer = startChild(
      [
        cli,
        "sealer",
        "--server",
        nats.url(),
        "--namespace",
        p.namespace,
        "--key-file",
        keyFile,
        "--id",
        "restarted",
        "--connect-wait",
        "120000",
        "--http",
        "127.0.0.1:0",
      ],
      { LOG_LEVEL: "info" },
    );
    try {
      // The endpoints are up (alive, not ready) while NATS is awaited; the sealer keeps trying.
      const url = await until(
        () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(sealer.output())?.[1],
        30_000,
        "the endpoints' url in the log",
      );
      await until(() => /cannot reach NATS/.test(sealer.output()), 30_000, "a retry logged");
      expect((await get(`${url}/healthz`)).status).toBe(200);
      expect((await get(`${url}/readyz`)).status).toBe(503);
      expect(sealer.child.exitCode).toBeNull();

      await nats.handle().start();
      const nc = await nats.connect("sealer-restart-check");
      const bus = await Bus.open(nc, { namespace: p.namespace });
      await sealedUpToNow(bus, 60_000);
      const report = await verifyLog(bus, { keys: [sealKey.publicKey] });
      expect(report.findings).toEqual([]);
      expect(report.sealed).toBe(entries.length);
      expect(report.unsealed.records).toBe(0);

      await until(async () => (await get(`${url}/readyz`)).status === 200, 30_000, "/readyz 200");
      const metrics = await until(
        async () => {
          const body = (await get(`${url}/metrics`)).body;
          return sample(body, "hookbus_sealer_lease_held") === 1 ? body : undefined;
        },
        30_000,
        "the lease reported held",
      );
      expect(metrics).toMatch(/^# TYPE hookbus_seal_lag_records gauge$/m);
      expect(metrics).toMatch(/^# TYPE hookbus_seal_lag_seconds gauge$/m);
      expect(metrics).toMatch(/^# TYPE hookbus_seal_batches_total counter$/m);
      expect(metrics).toContain('role="sealer"');
      expect(sample(metrics, "hookbus_seal_lag_records")).toBe(0);
      expect(sample(metrics, "hookbus_seal_lag_seconds")).toBe(0);
      expect(sample(metrics, "hookbus_seal_batches_total")).toBeGreaterThanOrEqual(1);
      expect(sample(metrics, "hookbus_sealed_sequence")).toBe(entries.at(-1)!.seq);
    } finally {
      sealer.child.kill("SIGTERM");
    }
    expect(await sealer.exited).toBe(0);
  }, 180_000);

  it("the next sealer repairs heads a killed sealer stored batches for but never wrote to KV", async () => {
    // Session S is sealed up to batch k (KV in step), then S is sealed further, then another
    // session alone: KV is rolled back to batch k's state, as a sealer killed after storing those
    // batches but before writing their heads leaves it. The newest batch does not name S.
    const { p, entries } = await sessionPipeline(nats.url(), { calls: 1, editable: false });
    const session = sessionOfSubject(p.namespace, entries[0]!.subject);
    const kv = await new Kvm(jetstream(p.bus.nc)).open(headsBucketName(p.subjects));
    const sealOnce = async () => {
      const s = await sealerFor(p.bus);
      await sealedUpToNow(p.bus, 30_000);
      await s.stop();
    };
    try {
      await sealOnce();
      const staleHead = (await kv.get(session))!.string();
      const staleThrough = (await kv.get(THROUGH_KEY))!.string();
      for (let i = 0; i < 3; i++) {
        await p.client.call("before_response_emit", run(), {
          content: `more ${i}`,
          allContent: [],
        });
      }
      await sealOnce();
      expect((await kv.get(session))!.string()).not.toBe(staleHead);
      await p.client.call("before_response_emit", run("another session"), {
        content: "elsewhere",
        allContent: [],
      });
      await sealOnce();
      const sealInfo = await p.bus.jsm.streams.info(sealStreamName(p.subjects));
      const newest = SealBatch.parse(
        (await p.bus.jsm.streams.getMessage(sealStreamName(p.subjects), {
          seq: sealInfo.state.last_seq,
        }))!.json(),
      );
      expect(newest.sessions.map((s) => s.session)).not.toContain(session);
      const freshHead = (await kv.get(session))!.string();

      await kv.put(session, staleHead);
      await kv.put(THROUGH_KEY, staleThrough);

      const next = await sealerFor(p.bus, { id: "next" });
      try {
        await p.client.call("before_response_emit", run(), { content: "after", allContent: [] });
        await sealedUpToNow(p.bus, 30_000);
      } finally {
        await next.stop();
      }
      const report = await verifyLog(p.bus, { keys: [sealKey.publicKey] });
      expect(report.findings).toEqual([]);
      expect(report.unsealed.records).toBe(0);
      // The repair wrote the head back before the new record was chained onto it.
      const after = JSON.parse((await kv.get(session))!.string()) as { count: number };
      expect(after.count).toBe((JSON.parse(freshHead) as { count: number }).count + 1);
      const last = await p.bus.jsm.streams.info(sealStreamName(p.subjects));
      expect(JSON.parse((await kv.get(THROUGH_KEY))!.string())).toEqual({
        index: last.state.last_seq,
      });
    } finally {
      await p.stop();
    }
  }, 120_000);
});
