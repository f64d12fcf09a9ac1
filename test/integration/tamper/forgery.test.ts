/**
 * Forging the log and seeing it detected. The attacker has write access to the log (its stream
 * is editable, or rewritten as someone with the server's files could) and to every bucket, but
 * not the sealer's private key. Each forgery must be named by its sequence, and
 * `hookbus audit verify --key PUB` must exit 1.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { SealBatch } from "../../../src/log/seal/batch.js";
import { useNatsServer } from "../pipeline/harness.js";
import {
  hookbus,
  publishRaw,
  rewriteStream,
  sealKey,
  sealedUpToNow,
  sealerFor,
  sessionPipeline,
  type RawEntry,
} from "./harness.js";
import { chainHash } from "../../../src/log/seal/hash.js";
import { createSealKey, sealKeyFromSeed } from "../../../src/log/seal/keys.js";
import { sealStreamName } from "../../../src/log/seal/batch.js";
import { verifyLog } from "../../../src/audit/verify.js";
import { type VerifyReport } from "../../../src/audit/verify-analyse.js";

const nats = useNatsServer();

/**
 * A clean session of 9 records, all sealed, the sealer stopped (restarted where a test wants the
 * forgery sealed too): entries 1, 3, 5, 7 are before_tool_call decisions (5 a blocked exec), 2, 4,
 * 6, 8 after_tool_call observations, 9 the before_response_emit decision.
 */
async function sealedSession() {
  const { p, entries } = await sessionPipeline(nats.url(), { calls: 4 });
  expect(entries).toHaveLength(9);
  let sealer = await sealerFor(p.bus);
  await sealedUpToNow(p.bus);
  await sealer.stop();
  const at = (n: number): RawEntry => entries[n - 1]!;
  const verify = async (...extra: string[]) => {
    const report = await verifyLog(p.bus, { keys: [sealKey.publicKey] });
    const cli = await hookbus(
      nats.url(),
      p.namespace,
      "audit",
      "verify",
      "--key",
      sealKey.publicKey,
      ...extra,
    );
    return { report, cli };
  };
  const reseal = async () => {
    sealer = await sealerFor(p.bus);
    await sealedUpToNow(p.bus);
    await sealer.stop();
  };
  const remove = (entry: RawEntry) =>
    p.bus.jsm.streams.deleteMessage(p.subjects.logStream, entry.seq, true);
  const close = async () => {
    await sealer.stop();
    await p.stop();
  };
  return { p, at, verify, reseal, remove, close };
}

const found = (report: VerifyReport) =>
  report.findings.map((f) => ({
    kind: f.kind,
    reason: f.reason,
    ...(f.seq === undefined ? {} : { seq: f.seq }),
    ...(f.batch === undefined ? {} : { batch: f.batch }),
  }));
const withoutBatch = (report: VerifyReport) => found(report).map(({ batch: _b, ...f }) => f);
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe("an altered record", () => {
  it("altered in place (the server's files) is named by its sequence, and only it", async () => {
    const s = await sealedSession();
    const victim = s.at(3);
    await rewriteStream(s.p.bus, s.p.subjects.logStream, (messages) =>
      messages.map((m, i) =>
        i + 1 === victim.seq
          ? {
              ...m,
              data: bytes({
                ...victim.raw,
                event: { ...(victim.raw.event as object), params: { path: "/etc/shadow" } },
              }),
            }
          : m,
      ),
    );
    const { report, cli } = await s.verify();
    expect(withoutBatch(report)).toEqual([
      { kind: "altered", reason: "hash-mismatch", seq: victim.seq },
    ]);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(
      new RegExp(`altered\\s+seq ${victim.seq} \\(decision before_tool_call call-1\\) was altered`),
    );
    expect(cli.stdout).toMatch(/TAMPERED: 1 finding\(s\).*1 altered, 0 removed/);
    await s.close();
  });

  it("replaced through the API (deleted, re-published changed) is named as removed, even once the forgery is sealed", async () => {
    const s = await sealedSession();
    const victim = s.at(4);
    await publishRaw(s.p.bus, victim.subject, {
      ...victim.raw,
      publishedAt: "2020-01-01T00:00:00.000Z",
    });
    await s.remove(victim);
    await s.reseal();
    const { report, cli } = await s.verify();
    expect(withoutBatch(report)).toEqual([{ kind: "removed", reason: "missing", seq: victim.seq }]);
    expect(cli.code).toBe(1);
    await s.close();
  });
});

describe("a removed record", () => {
  it("in the middle is named by its sequence", async () => {
    const s = await sealedSession();
    await s.remove(s.at(6));
    const { report, cli } = await s.verify();
    expect(withoutBatch(report)).toEqual([
      { kind: "removed", reason: "missing", seq: s.at(6).seq },
    ]);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(
      new RegExp(`removed\\s+seq ${s.at(6).seq} .* the log no longer holds it`),
    );
    await s.close();
  });

  it("at the end (truncation) is named record by record", async () => {
    const s = await sealedSession();
    await s.remove(s.at(9));
    await s.remove(s.at(8));
    const { report, cli } = await s.verify();
    expect(withoutBatch(report)).toEqual([
      { kind: "removed", reason: "missing", seq: s.at(8).seq },
      { kind: "removed", reason: "missing", seq: s.at(9).seq },
    ]);
    expect(cli.code).toBe(1);
    await s.close();
  });
});

describe("a re-subjected record", () => {
  it("a blocked call filed under …allow is named (its subject no longer says what it holds), even sealed", async () => {
    const s = await sealedSession();
    const blocked = s.at(5);
    expect(blocked.subject).toMatch(/\.before_tool_call\.block$/);
    const allow = blocked.subject.replace(/\.block$/, ".allow");
    const seq = await publishRaw(s.p.bus, allow, blocked.raw);
    await s.remove(blocked);
    await s.reseal();
    const { report, cli } = await s.verify();
    expect(withoutBatch(report)).toEqual([
      { kind: "removed", reason: "missing", seq: blocked.seq },
      { kind: "re-subjected", reason: "subject-mismatch", seq },
    ]);
    expect(cli.stdout).toMatch(/outcome allow in the subject, "block" in the record/);
    await s.close();
  });

  it("moved in place (the server's files) is named twice: hash and subject", async () => {
    const s = await sealedSession();
    const blocked = s.at(5);
    await rewriteStream(s.p.bus, s.p.subjects.logStream, (messages) =>
      messages.map((m, i) =>
        i + 1 === blocked.seq ? { ...m, subject: m.subject.replace(/\.block$/, ".allow") } : m,
      ),
    );
    const { report } = await s.verify();
    expect(withoutBatch(report)).toEqual([
      { kind: "re-subjected", reason: "subject-mismatch", seq: blocked.seq },
      { kind: "altered", reason: "hash-mismatch", seq: blocked.seq },
    ]);
    await s.close();
  });
});

describe("an inserted record", () => {
  it("repeating a stored call's id is named, even once sealed", async () => {
    const s = await sealedSession();
    const model = s.at(7);
    const seq = await publishRaw(s.p.bus, model.subject, { ...model.raw, coordinator: "evil" });
    await s.reseal();
    const { report, cli } = await s.verify();
    expect(withoutBatch(report)).toEqual([{ kind: "inserted", reason: "duplicate-id", seq }]);
    expect(cli.code).toBe(1);
    await s.close();
  });

  it("inserted into history (the server's files) is named at its sequence, and nothing before it", async () => {
    const s = await sealedSession();
    const model = s.at(4);
    await rewriteStream(s.p.bus, s.p.subjects.logStream, (messages) => [
      ...messages.slice(0, model.seq),
      {
        subject: model.subject,
        data: bytes({ ...model.raw, eventId: "forged" }),
      },
      ...messages.slice(model.seq),
    ]);
    const { report, cli } = await s.verify();
    expect(report.ok).toBe(false);
    expect(Math.min(...report.findings.map((f) => f.seq ?? Infinity))).toBe(model.seq + 1);
    expect(cli.code).toBe(1);
    await s.close();
  });
});

describe("forged seals", () => {
  it("a record altered in place and its batch re-sealed with another key: the batch is named", async () => {
    const s = await sealedSession();
    const victim = s.at(3);
    const forgedData = bytes({ ...victim.raw, coordinator: "evil" });
    await rewriteStream(s.p.bus, s.p.subjects.logStream, (messages) =>
      messages.map((m, i) => (i + 1 === victim.seq ? { ...m, data: forgedData } : m)),
    );
    const attacker = sealKeyFromSeed(createSealKey().seed);
    let forgedIndex = 0;
    await rewriteStream(s.p.bus, sealStreamName(s.p.subjects), (messages) =>
      messages.map((m) => {
        const batch = SealBatch.parse(JSON.parse(new TextDecoder().decode(m.data)));
        const session = batch.sessions.find((x) => x.records.some(([seq]) => seq === victim.seq));
        if (session === undefined) return m;
        forgedIndex = batch.index;
        let prev = session.prev;
        session.records = session.records.map(([seq]) => {
          const data = seq === victim.seq ? forgedData : s.at(seq).data;
          prev = chainHash(prev, s.at(seq).subject, data);
          return [seq, prev] as [number, string];
        });
        const data = bytes(batch);
        const headers = natsHeaders();
        headers.set("Hookbus-Seal-Signature", attacker.sign(data));
        headers.set("Hookbus-Seal-Key", attacker.publicKey);
        return { subject: m.subject, data, headers };
      }),
    );
    const { report, cli } = await s.verify();
    expect(found(report)).toContainEqual({
      kind: "seal",
      reason: "untrusted-key",
      batch: forgedIndex,
    });
    expect(report.findings.some((f) => f.reason === "seal-chain-break")).toBe(true);
    expect(cli.code).toBe(1);
    await s.close();
  });

  it("an anchor catches a history deleted and recreated, even when an honest sealer re-sealed it", async () => {
    const s = await sealedSession();
    const dir = mkdtempSync(join(tmpdir(), "hookbus-anchor-"));
    const keyFile = join(dir, "sealer.nk");
    writeFileSync(keyFile, `${sealKey.seed}\n`);
    const anchorFile = join(dir, "anchor.json");
    const made = await hookbus(
      nats.url(),
      s.p.namespace,
      "audit",
      "anchor",
      "--key-file",
      keyFile,
      "--out",
      anchorFile,
    );
    expect(made.code).toBe(0);
    expect((await s.verify("--anchor", anchorFile)).cli.code).toBe(0);

    // Both streams deleted; the log recreated with a rewritten history; the sealer re-seals it.
    await s.p.bus.jsm.streams.delete(sealStreamName(s.p.subjects));
    const victim = s.at(5);
    await rewriteStream(s.p.bus, s.p.subjects.logStream, (messages) =>
      messages.map((m, i) =>
        i + 1 === victim.seq
          ? { ...m, data: bytes({ ...victim.raw, coordinator: "rewritten" }) }
          : m,
      ),
    );
    await s.reseal();
    const plain = await s.verify();
    expect(plain.report.findings).toEqual([]); // without the anchor, the new history looks whole
    const anchored = await s.verify("--anchor", anchorFile);
    expect(anchored.cli.code).toBe(1);
    expect(anchored.cli.stdout).toMatch(
      /is not the batch the anchor vouches for|has no batch \d+, which the anchor vouches for/,
    );
    await s.close();
  });
});

describe("anchor files", () => {
  it("refuses an anchor whose statement was edited", async () => {
    const s = await sealedSession();
    const dir = mkdtempSync(join(tmpdir(), "hookbus-anchor-"));
    const keyFile = join(dir, "sealer.nk");
    writeFileSync(keyFile, `${sealKey.seed}\n`);
    const anchorFile = join(dir, "anchor.json");
    await hookbus(
      nats.url(),
      s.p.namespace,
      "audit",
      "anchor",
      "--key-file",
      keyFile,
      "--out",
      anchorFile,
    );
    const { readFileSync } = await import("node:fs");
    const file = JSON.parse(readFileSync(anchorFile, "utf8")) as { statement: string };
    const statement = JSON.parse(file.statement) as { hash: string };
    statement.hash = createHash("sha256").update("other").digest("hex");
    writeFileSync(anchorFile, JSON.stringify({ ...file, statement: JSON.stringify(statement) }));
    const cli = await hookbus(
      nats.url(),
      s.p.namespace,
      "audit",
      "verify",
      "--key",
      sealKey.publicKey,
      "--anchor",
      anchorFile,
    );
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toMatch(/HOOKBUS_ANCHOR_INVALID|signature that does not verify/);
    await s.close();
  });
});
