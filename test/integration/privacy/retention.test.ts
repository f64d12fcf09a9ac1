/**
 * Retention by rule (issue 36 item 3, docs/privacy.md) on a real NATS and PostgreSQL: the
 * registry's `retention` section keeps an agent's keys 0 days and the namespace's 365; one
 * `hookbus erase --retention` run erases the 0-day agent's recorded session (its data key purged,
 * its index rows scrubbed, an erasure record naming the rule) and leaves the other session
 * readable; `audit verify` still passes under the sealer, coordinator and privacy keys.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { main } from "../../../src/cli/main.js";
import { startPipeline, useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";
import { sealKey, sealerFor, sealedUpToNow } from "../tamper/harness.js";
import { verifyLog } from "../../../src/audit/verify.js";
import { createSigningKey, signingKeyFromSeed } from "../../../src/log/sign/keys.js";
import { startIndexer } from "../../../src/indexer/index.js";
import { queryIndexAll } from "../../../src/audit/pg/query.js";
import { ERASED_MARK, keyName, subjectDigest } from "../../../src/privacy/index.js";
import type { DecisionRecord, ErasureRecord } from "../../../src/log/record.js";
import { startRetentionSchedule, type RetentionRun } from "../../../src/erasure/retention.js";
import { readerRecordKeys, testKek } from "../../support/privacy.js";

const SECRET = "Quagga-retention-7731";
const kek = testKek();
const coordinatorKey = createSigningKey();
const privacyKey = createSigningKey();
const privacySeedFile = join(mkdtempSync(join(tmpdir(), "hookbus-retention-key-")), "p.sign.nk");
writeFileSync(privacySeedFile, `${privacyKey.seed}\n`, { mode: 0o600 });
const nats = useNatsServer();
const postgres = usePostgres();

const echo = definePolicy({
  name: "echo",
  version: "1.0.0",
  hooks: { before_tool_call: () => undefined },
});

async function hookbus(p: Pipeline, ...args: string[]) {
  const lines: string[] = [];
  const out = { print: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
  const code = await main([...args, "--server", nats.url(), "--namespace", p.namespace], out);
  return { code, text: lines.join("\n") };
}

async function record(p: Pipeline, agentId: string, sessionKey: string, callId: string) {
  const ctx = { agentId, sessionKey, runId: "r", toolName: "note", toolCallId: callId };
  const got = await p.client.call(
    "before_tool_call",
    ctx,
    { toolName: "note", toolCallId: callId, params: { text: `${SECRET} ${callId}` } },
    { callId },
  );
  expect(got.decision.outcome).toBe("allow");
}

describe("retention by rule", () => {
  it("a 0-day rule erases a recorded session; a session inside its retention is untouched", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [{ name: "echo", hooks: ["before_tool_call"], priority: 1 }],
        retention: { days: 365, agents: { "agent-short": 0 } },
      },
      policies: [echo],
      coordinator: { privacy: { kek }, signingKey: signingKeyFromSeed(coordinatorKey.seed) },
    });
    const { pool, url } = await postgres.database();
    const sealer = await sealerFor(p.bus);
    const indexer = await startIndexer({ bus: p.bus, pool });
    try {
      await record(p, "agent-short", "s-short", "c1");
      await record(p, "agent-short", "s-short", "c2");
      await record(p, "agent-long", "s-long", "c3");
      await sealedUpToNow(p.bus);
      await until(async () => (await indexer.lag()).records === 0, 20_000, "indexed");
      const keys = await readerRecordKeys(p, kek);
      const short = subjectDigest("session:s-short");
      const long = subjectDigest("session:s-long");

      // A dry run names the expired key and erases nothing.
      const dry = await hookbus(p, "erase", "--retention", "--dry-run", "--json");
      expect(dry.code, dry.text).toBe(0);
      expect(JSON.parse(dry.text)).toMatchObject({
        keys: 2,
        expired: [{ subject: short, rule: "agent:agent-short", days: 0 }],
        erasures: [],
      });
      expect(await keys.store.kv.get(keyName(short))).toMatchObject({ operation: "PUT" });

      const run = await hookbus(
        p,
        "erase",
        "--retention",
        "--index",
        url,
        "--sign-key-file",
        privacySeedFile,
        "--json",
      );
      expect(run.code, run.text).toBe(0);
      const { erasures } = JSON.parse(run.text) as { erasures: { record: ErasureRecord }[] };
      expect(erasures.map((e) => e.record)).toEqual([
        expect.objectContaining({
          kind: "erasure",
          subject: short,
          target: "session",
          by: "retention:agent:agent-short",
          keyPurged: true,
          rowsScrubbed: 2,
        }),
      ]);
      expect(erasures[0]!.record.reason).toContain(
        "retention rule agent:agent-short: data keys are kept 0 days",
      );
      expect(await keys.store.kv.get(keyName(short))).toMatchObject({ operation: "PURGE" });

      // The proof survives the erasure.
      await sealedUpToNow(p.bus);
      const report = await verifyLog(p.bus, {
        keys: [sealKey.publicKey],
        coordinatorKeys: [coordinatorKey.publicKey, privacyKey.publicKey],
      });
      expect(report.findings).toEqual([]);
      expect(report.ok).toBe(true);

      // The expired session reads [erased] in the log and the index; the other one is intact.
      const gone = await keys.open((await p.decisionRecord("c1")).record);
      expect(gone.failure).toBe("erased");
      expect(gone.record.event.params).toBe(ERASED_MARK);
      const kept = await keys.open((await p.decisionRecord("c3")).record);
      expect(kept.record.event.params).toEqual({ text: `${SECRET} c3` });
      expect(await keys.store.kv.get(keyName(long))).toMatchObject({ operation: "PUT" });
      const indexed: unknown[] = [];
      for await (const e of queryIndexAll(pool, p.namespace, { sessionKey: "s-short" }))
        indexed.push((e.record as DecisionRecord).event.params);
      expect(indexed).toEqual([ERASED_MARK, ERASED_MARK]);

      // A second run finds nothing more to erase.
      const again = await hookbus(p, "erase", "--retention", "--json");
      expect(JSON.parse(again.text)).toMatchObject({ keys: 1, expired: [], erasures: [] });
    } finally {
      await indexer.stop();
      await sealer.stop();
    }
  }, 90_000);

  it("a retention schedule erases, without anyone running it again, a session recorded later", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [{ name: "echo", hooks: ["before_tool_call"], priority: 1 }],
        retention: { days: 0 },
      },
      policies: [echo],
      coordinator: { privacy: { kek } },
    });
    const runs: RetentionRun[] = [];
    const schedule = startRetentionSchedule({
      bus: p.bus,
      everyMs: 1000,
      onRun: (run) => runs.push(run),
    });
    try {
      await until(() => runs.length >= 1, 10_000, "a first run");
      await record(p, "agent-any", "s-later", "later-1");
      const keys = await readerRecordKeys(p, kek);
      const later = subjectDigest("session:s-later");
      const erasedBy = () => runs.flatMap((r) => r.erasures.map((e) => e.record));
      // A run reports once its erasures are recorded, after the key is purged: wait for that.
      await until(
        () => erasedBy().some((e) => e.subject === later),
        15_000,
        "the later session erased by the schedule",
      );
      expect(erasedBy()).toContainEqual(
        expect.objectContaining({ subject: later, by: "retention:namespace", keyPurged: true }),
      );
      expect(await keys.store.kv.get(keyName(later))).toMatchObject({ operation: "PURGE" });
      const opened = await keys.open((await p.decisionRecord("later-1")).record);
      expect(opened.record.event.params).toBe(ERASED_MARK);
    } finally {
      await schedule.stop();
    }
  }, 60_000);
});
