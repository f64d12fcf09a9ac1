/**
 * `hookbus erase` end to end (issue 36, docs/privacy.md), on a nats-server this file owns (its
 * own store directory, so the test can read every byte JetStream wrote) and a fresh PostgreSQL
 * database: a session recorded with encryption on, signed, sealed and indexed is erased; then
 * `audit verify` passes under the sealer and coordinator keys, the index and the log show
 * "[erased]", replay skips and counts the records, the erasure is in the log, and neither the
 * store files nor the database hold the session's plaintext or its data key.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { main } from "../../../src/cli/main.js";
import { findNatsServer, type NatsServerHandle } from "../../../src/testing/nats.js";
import { startPipeline, type Pipeline } from "../pipeline/harness.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";
import { sealKey, sealerFor, sealedUpToNow } from "../tamper/harness.js";
import { verifyLog } from "../../../src/audit/verify.js";
import { createSigningKey, signingKeyFromSeed } from "../../../src/log/sign/keys.js";
import { startIndexer } from "../../../src/indexer/index.js";
import { queryIndexAll } from "../../../src/audit/pg/query.js";
import {
  DataKeyStore,
  ERASED_MARK,
  RecordKeys,
  keyName,
  parseKek,
  subjectDigest,
} from "../../../src/privacy/index.js";
import { Replayer } from "../../../src/replay/replay.js";
import type { DecisionRecord } from "../../../src/log/record.js";

const SECRET = "Zanzibar-4111-0042-Quokka";
const SESSION = "sess-erase";
const OTHER = "sess-keep";
const kek = parseKek(randomBytes(32).toString("hex"), "test");
const coordinatorKey = createSigningKey();
const privacyKey = createSigningKey();

const storeDir = mkdtempSync(join(tmpdir(), "hookbus-erase-store-"));
const privacySeedFile = join(mkdtempSync(join(tmpdir(), "hookbus-erase-key-")), "privacy.sign.nk");
writeFileSync(privacySeedFile, `${privacyKey.seed}\n`, { mode: 0o600 });
let server: NatsServerHandle;
const postgres = usePostgres();

beforeAll(async () => {
  // The last -sd wins: this file's own store directory.
  server = await findNatsServer({ own: true, args: ["-sd", storeDir] });
}, 30_000);
afterAll(async () => {
  await server?.stop();
  rmSync(storeDir, { recursive: true, force: true });
});

const guard = definePolicy({
  name: "guard",
  version: "1.0.0",
  hooks: {
    before_tool_call: (e) =>
      JSON.stringify(e.params).includes("Zanzibar")
        ? {
            block: true,
            blockReason: `no card numbers (${String((e.params as { card?: string }).card)})`,
          }
        : undefined,
  },
});

/** Every file under `dir` that holds `needle` (bytes), by path. */
function filesHolding(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle, "utf8");
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (readFileSync(path).includes(bytes)) found.push(path);
    }
  };
  walk(dir);
  return found;
}

async function hookbus(p: Pipeline, ...args: string[]) {
  const lines: string[] = [];
  const out = { print: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
  const code = await main([...args, "--server", server.url, "--namespace", p.namespace], out);
  return { code, text: lines.join("\n") };
}

describe("hookbus erase", () => {
  it("erases a session: verify still passes, readers see [erased], no plaintext is left", async () => {
    const p = await startPipeline(server.url, {
      registry: { policies: [{ name: "guard", hooks: ["before_tool_call"], priority: 10 }] },
      policies: [guard],
      coordinator: {
        privacy: { kek },
        signingKey: signingKeyFromSeed(coordinatorKey.seed),
      },
    });
    const { pool, url } = await postgres.database();
    const sealer = await sealerFor(p.bus);
    const indexer = await startIndexer({ bus: p.bus, pool });
    try {
      for (const [session, i] of [
        [SESSION, 1],
        [SESSION, 2],
        [OTHER, 3],
      ] as const) {
        const ctx = {
          agentId: "agent-x",
          sessionKey: session,
          runId: "r",
          toolName: "pay",
          toolCallId: `t${i}`,
        };
        const got = await p.client.call(
          "before_tool_call",
          ctx,
          { toolName: "pay", toolCallId: `t${i}`, params: { card: `${SECRET}-${i}` } },
          { callId: `pay-${i}` },
        );
        expect(got.decision.outcome).toBe("block");
      }
      const keys = new RecordKeys(await DataKeyStore.open(p.connections.reader, p.subjects, kek));
      const subject = subjectDigest(`session:${SESSION}`);
      const wrapped = (await keys.store.kv.get(keyName(subject)))!.string();
      const wrappedKey = (JSON.parse(wrapped) as { key: string }).key;
      await sealedUpToNow(p.bus);
      await until(async () => (await indexer.lag()).records === 0, 20_000, "indexed");

      // Before: sealed in the log, opened with the KEK; the wrapped key is in the store files.
      const before = (await p.decisionRecord("pay-1")).record;
      expect((await keys.open(before)).record.event.params).toEqual({ card: `${SECRET}-1` });
      expect(filesHolding(storeDir, SECRET)).toEqual([]);
      expect(filesHolding(storeDir, wrappedKey)).not.toEqual([]);

      const erased = await hookbus(
        p,
        "erase",
        "--session",
        SESSION,
        "--reason",
        "GDPR art. 17 request #81",
        "--index",
        url,
        "--by",
        "dpo",
        "--sign-key-file",
        privacySeedFile,
        "--json",
      );
      expect(erased.code, erased.text).toBe(0);
      const erasure = JSON.parse(erased.text) as {
        seq: number;
        rowsScrubbed: number;
        keyPurged: boolean;
      };
      expect(erasure).toMatchObject({
        kind: "erasure",
        target: "session",
        subject,
        by: "dpo",
        keyPurged: true,
        rowsScrubbed: 2,
      });

      // The proof survives: seals and coordinator signatures (the erasure record is the privacy user's, signed by its key).
      await sealedUpToNow(p.bus);
      const report = await verifyLog(p.bus, {
        keys: [sealKey.publicKey],
        coordinatorKeys: [coordinatorKey.publicKey, privacyKey.publicKey],
      });
      expect(report.findings).toEqual([]);
      expect(report.ok).toBe(true);

      // Readers: the log opened with the KEK, and the index, read "[erased]"; the other session is intact.
      const opened = await keys.open((await p.decisionRecord("pay-1")).record);
      expect(opened.failure).toBe("erased");
      expect(opened.record.event.params).toBe(ERASED_MARK);
      expect(opened.record.decision.blockReason).toBe(ERASED_MARK);
      expect(opened.record.decision.outcome).toBe("block");
      const kept = await keys.open((await p.decisionRecord("pay-3")).record);
      expect(kept.record.event.params).toEqual({ card: `${SECRET}-3` });
      const indexed: DecisionRecord[] = [];
      for await (const e of queryIndexAll(pool, p.namespace, { sessionKey: SESSION }))
        indexed.push(e.record as DecisionRecord);
      expect(indexed.map((r) => [r.event.params, r.decision.outcome])).toEqual([
        [ERASED_MARK, "block"],
        [ERASED_MARK, "block"],
      ]);

      // Replay skips the erased records and counts them.
      const replayer = new Replayer({
        policies: [guard],
        registry: { policies: [{ name: "guard", hooks: ["before_tool_call"], priority: 10 }] },
        keys,
      });
      const results = [];
      for await (const r of replayer.run((await p.readLog()).map((s) => s.record))) results.push(r);
      expect(results.map((r) => r.callId)).toEqual(["pay-3"]);
      expect(replayer.stats.skipped.erased).toBe(2);
      expect(replayer.stats.skipped.erasure).toBe(1);

      // Nothing left: no plaintext and no trace of the wrapped key in JetStream's files, no plaintext in PostgreSQL.
      expect(filesHolding(storeDir, SECRET)).toEqual([]);
      expect(filesHolding(storeDir, wrappedKey)).toEqual([]);
      const tables = await pool.query<{ t: string }>(
        "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'",
      );
      for (const { t } of tables.rows) {
        const hits = await pool.query(`SELECT 1 FROM "${t}" x WHERE x::text LIKE $1`, [
          `%Zanzibar%`,
        ]);
        expect(hits.rowCount, t).toBe(0);
      }
    } finally {
      await indexer.stop();
      await sealer.stop();
    }
  }, 90_000);
});
