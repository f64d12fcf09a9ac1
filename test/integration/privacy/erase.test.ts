/**
 * `hookbus erase` end to end (issue 36, docs/privacy.md), on a nats-server this file owns (its
 * own store directory, so the test can read every byte JetStream wrote) and a fresh PostgreSQL
 * database: a session recorded with encryption on, signed, sealed and indexed is erased; then
 * `audit verify` passes under the sealer and coordinator keys, the index and the log show
 * "[erased]", replay skips and counts the records, the erasure is in the log, and neither the
 * store files nor the database hold the session's plaintext or its data key.
 */
import { randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";
import type { Pool } from "pg";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
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
import { ERASED_MARK, keyName, subjectDigest } from "../../../src/privacy/index.js";
import { Replayer } from "../../../src/replay/replay.js";
import { kvKey } from "../../../src/policy/state/kv-store.js";
import type { ApprovalRecord, DecisionRecord, ErasureRecord } from "../../../src/log/record.js";
import { approvalSummary } from "../../../src/audit/timeline.js";
import { answerApproval, showApproval } from "../../../src/approvals/client.js";
import type { ApprovalProgress } from "../../../src/agent/approval-wait.js";
import { readerRecordKeys, testKek } from "../../support/privacy.js";

const SECRET = "Zanzibar-4111-0042-Quokka";
const SESSION = "sess-erase";
const OTHER = "sess-keep";
const kek = testKek();
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

/** Asks for approval of every `wire`, its title and params naming the payee. */
const approver = definePolicy({
  name: "approver",
  version: "1.0.0",
  hooks: {
    before_tool_call: (e) =>
      e.toolName === "wire"
        ? {
            requireApproval: {
              title: `wire to ${String((e.params as { payee?: string }).payee)}`,
              timeoutMs: 60_000,
            },
          }
        : undefined,
  },
});

/**
 * Every blob in the blob stream (its chunks joined) whose bytes, or whose gunzipped bytes, hold
 * `needle`: a blob stored in clear is gzipped, so a grep of the store files alone would miss it.
 */
async function blobsHolding(p: Pipeline, needle: string): Promise<string[]> {
  const info = await p.bus.jsm.streams.info(p.subjects.blobStream, { subjects_filter: ">" });
  const blobs = new Map<string, Buffer[]>();
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    const index = Number(subject.slice(subject.lastIndexOf(".") + 1));
    const blob = subject.slice(0, subject.lastIndexOf("."));
    const msg = await p.bus.jsm.streams.getMessage(p.subjects.blobStream, {
      last_by_subj: subject,
    });
    const parts = blobs.get(blob) ?? [];
    parts[index] = Buffer.from(msg!.data);
    blobs.set(blob, parts);
  }
  const bytes = Buffer.from(needle, "utf8");
  const holding: string[] = [];
  for (const [blob, parts] of blobs) {
    const stored = Buffer.concat(parts);
    let inflated = Buffer.alloc(0);
    try {
      inflated = gunzipSync(stored);
    } catch {
      // sealed bytes do not gunzip
    }
    if (stored.includes(bytes) || inflated.includes(bytes)) holding.push(blob);
  }
  return holding;
}

/** Every table of the index database with a row that holds `needle`. */
async function tablesHolding(pool: Pool, needle: string): Promise<string[]> {
  const tables = await pool.query<{ t: string }>(
    "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'",
  );
  const holding: string[] = [];
  for (const { t } of tables.rows) {
    const hits = await pool.query(`SELECT 1 FROM "${t}" x WHERE x::text LIKE $1`, [`%${needle}%`]);
    if ((hits.rowCount ?? 0) > 0) holding.push(t);
  }
  return holding;
}

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

/** `hookbus erase --session` as the privacy user "dpo", which must succeed. */
async function eraseSession(p: Pipeline, session: string, indexUrl: string): Promise<void> {
  const erased = await hookbus(
    p,
    "erase",
    "--session",
    session,
    "--reason",
    "test",
    "--index",
    indexUrl,
    "--by",
    "dpo",
    "--sign-key-file",
    privacySeedFile,
  );
  expect(erased.code, erased.text).toBe(0);
}

/**
 * A pipeline whose fail-open policy taints a session in sealed state once it fetches the web, and
 * blocks its later calls; `call` makes one call of the session (naming `subject` when given).
 */
async function startTaintPipeline(TAINT: string, session: string, subject?: string) {
  const taint = definePolicy({
    name: "taint",
    version: "1.0.0",
    hooks: {
      async before_tool_call(event, _ctx, { state }) {
        if (event.toolName === "web_fetch") {
          await state.set("tainted", { by: `${TAINT}-url` });
          return undefined;
        }
        const tainted = await state.get<{ by: string }>("tainted");
        return tainted === undefined
          ? undefined
          : { block: true, blockReason: "the session read untrusted web content" };
      },
    },
  });
  const p = await startPipeline(server.url, {
    // Fail-open on purpose: an erased session must block even so.
    registry: {
      policies: [
        { name: "taint", hooks: ["before_tool_call"], priority: 10, failMode: "fail-open" },
      ],
    },
    policies: [taint],
    worker: { state: "kv", sealState: { keyCacheMs: 0 } },
    coordinator: { privacy: { kek }, signingKey: signingKeyFromSeed(coordinatorKey.seed) },
  });
  const call = (toolName: string, i: number) =>
    p.client.call(
      "before_tool_call",
      {
        ...{ agentId: "agent-x", sessionKey: session, runId: "r", toolName, toolCallId: `s${i}` },
        ...(subject === undefined ? {} : { subject }),
      },
      { toolName, toolCallId: `s${i}`, params: {} },
      { callId: `state-${i}` },
    );
  return { p, call };
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
      const keys = await readerRecordKeys(p, kek);
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
      expect(await tablesHolding(pool, "Zanzibar")).toEqual([]);
    } finally {
      await indexer.stop();
      await sealer.stop();
    }
  }, 90_000);

  it("leaves no plaintext in a pending approval or a blob-sized call: approvers read [erased], the call is blocked", async () => {
    const REST = "Quagga-7351-Okapi";
    const session = "sess-rest";
    const p = await startPipeline(server.url, {
      registry: {
        policies: [
          { name: "guard", hooks: ["before_tool_call"], priority: 10 },
          { name: "approver", hooks: ["before_tool_call"], priority: 5 },
        ],
      },
      policies: [guard, approver],
      coordinator: { privacy: { kek }, signingKey: signingKeyFromSeed(coordinatorKey.seed) },
      clientTimeoutMs: 30_000,
    });
    const { pool, url } = await postgres.database();
    const indexer = await startIndexer({ bus: p.bus, pool });
    try {
      const ctx = (toolCallId: string) => ({
        agentId: "agent-x",
        sessionKey: session,
        runId: "r",
        toolName: "wire",
        toolCallId,
      });
      // A call too large for one message (random text does not gzip below max_payload): blobs.
      const big = `${randomBytes(1.5 * 1024 * 1024).toString("base64")} ${REST}-blob`;
      const large = await p.client.call(
        "before_tool_call",
        { ...ctx("t-big"), toolName: "upload" },
        { toolName: "upload", toolCallId: "t-big", params: { note: big } },
        { callId: "big-1" },
      );
      expect(large.decision.outcome).toBe("allow");
      expect((await p.bus.jsm.streams.info(p.subjects.blobStream)).state.messages).toBeGreaterThan(
        0,
      );

      // A call that waits for a person: its request holds the payee in its title and params.
      const progress: ApprovalProgress[] = [];
      const held = p.client.call(
        "before_tool_call",
        ctx("t-wire"),
        { toolName: "wire", toolCallId: "t-wire", params: { payee: `${REST}-payee` } },
        { callId: "wire-1", onApproval: (report) => progress.push(report) },
      );
      held.catch(() => {});
      const first = await until(() => progress[0], 15_000, "the request is pending");
      expect(first.request.title).toBe(`wire to ${REST}-payee`);
      // The approver (no KEK) reads the texts through a coordinator, as before.
      const shown = await showApproval(p.connections.reader, first.id, p.namespace);
      expect(shown.params).toEqual({ payee: `${REST}-payee` });
      expect(shown.request.title).toBe(`wire to ${REST}-payee`);
      await until(async () => (await indexer.lag()).records === 0, 20_000, "indexed");

      // Before the erasure already: the bucket and the blobs hold ciphertext only.
      expect(filesHolding(storeDir, REST)).toEqual([]);
      expect(await blobsHolding(p, REST)).toEqual([]);

      await eraseSession(p, session, url);

      // The approver reads [erased]; an approve cannot let the call run: it is blocked.
      const after = await showApproval(p.connections.reader, first.id, p.namespace);
      expect(after.params).toEqual({ payee: ERASED_MARK });
      expect(after.request.title).toBe(ERASED_MARK);
      await answerApproval(
        p.connections.reader,
        { id: first.id, decision: "approve" },
        { namespace: p.namespace, approver: "alice" },
      ).catch((error: unknown) => error);
      const { decision } = await held;
      expect(decision.outcome).toBe("block");
      expect(decision.blockReason).toContain("HOOKBUS_SESSION_ERASED");
      // Settled by the erasure, not "denied" by nobody: the record names the erased subject.
      expect(decision.resolvedApproval).toMatchObject({ resolution: "erased", by: [] });
      const log = (await p.readLog()).map((stored) => stored.record);
      const erasure = log.find((r): r is ErasureRecord => r.kind === "erasure");
      const settled = await until(
        async () =>
          (await p.readLog())
            .map((stored) => stored.record)
            .find((r): r is ApprovalRecord => r.kind === "approval" && r.approvalId === first.id),
        15_000,
        "the approval record",
      );
      expect(settled).toMatchObject({
        resolution: "erased",
        effect: "block",
        answers: [],
        erasedSubject: erasure!.subject,
      });
      expect(approvalSummary(settled)).toContain("settled by the erasure of subject");

      expect(filesHolding(storeDir, REST)).toEqual([]);
      expect(await blobsHolding(p, REST)).toEqual([]);
      expect(await tablesHolding(pool, REST)).toEqual([]);
    } finally {
      await indexer.stop();
    }
  }, 90_000);

  it("seals session state; after the erasure a tainted session stays blocked, never reads as clean", async () => {
    const TAINT = "Marmoset-3319-Fjord";
    const session = "sess-state";
    const { p, call } = await startTaintPipeline(TAINT, session);
    const { url } = await postgres.database();
    expect((await call("web_fetch", 1)).decision.outcome).toBe("allow");
    expect((await call("email", 2)).decision).toMatchObject({
      outcome: "block",
      blockReason: "the session read untrusted web content",
    });
    // The state bucket holds the flag sealed: as the KV API reads it, and in the store files.
    const stateKv = await new Kvm(jetstream(p.connections.reader)).open(p.subjects.stateBucket);
    const address = { policy: "taint", sessionKey: session, key: "tainted" };
    const raw = (await stateKv.get(kvKey(address)))!.string();
    expect(raw).toContain("hookbus-sealed");
    expect(raw).not.toContain(TAINT);
    expect(filesHolding(storeDir, TAINT)).toEqual([]);

    await eraseSession(p, session, url);

    // The flag cannot be read any more, and is not read as "no flag": the call is blocked.
    const after = await call("email", 3);
    expect(after.decision.outcome).toBe("block");
    expect(after.decision.blockReason).toContain("the session was erased");
    expect(filesHolding(storeDir, TAINT)).toEqual([]);
  }, 90_000);
  it("erases the state of a subject's sessions with the subject: the tainted session stays blocked", async () => {
    const TAINT = "Tamarin-7140-Brae";
    const { p, call } = await startTaintPipeline(TAINT, "sess-user", "user-4711");
    const { pool, url } = await postgres.database();
    const indexer = await startIndexer({ bus: p.bus, pool });
    try {
      expect((await call("web_fetch", 1)).decision.outcome).toBe("allow");
      expect((await call("email", 2)).decision.outcome).toBe("block");
      await until(async () => (await indexer.lag()).records === 0, 20_000, "indexed");

      const erased = await hookbus(
        p,
        ...["erase", "--subject", "user-4711", "--reason", "request", "--index", url],
        ...["--by", "dpo", "--sign-key-file", privacySeedFile],
      );
      expect(erased.code, erased.text).toBe(0);
      expect(erased.text).toContain("1 of its sessions erased with it");

      // The session's state was sealed under the session's key: erased with the subject now.
      const after = await call("email", 3);
      expect(after.decision.outcome).toBe("block");
      expect(after.decision.blockReason).toContain("the session was erased");
      const erasures = (await p.readLog())
        .map((stored) => stored.record)
        .filter((r): r is ErasureRecord => r.kind === "erasure");
      expect(erasures.map((e) => [e.target, e.by])).toEqual([
        ["subject", "dpo"],
        ["session", "dpo"],
      ]);
      expect(erasures[1]!.reason).toContain(erasures[0]!.erasureId);
    } finally {
      await indexer.stop();
    }
  }, 90_000);
});
