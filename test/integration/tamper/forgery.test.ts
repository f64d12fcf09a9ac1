/**
 * Forging the log and seeing it detected. The log stream of these tests is editable (created
 * without deny_delete), as it would be for an attacker with access to the server: a record is
 * altered (re-published changed, the original deleted), removed (deleted), or inserted
 * (published beside hookbus). `verifyLog` must name exactly the forged record, and
 * `hookbus audit verify` must exit 1.
 */
import { describe, expect, it } from "vitest";
import { linkRecord, recordHash, verifyLog, type LogRecord } from "../../../src/index.js";
import { useNatsServer } from "../pipeline/harness.js";
import {
  AGENT,
  SESSION,
  expectOneChain,
  hookbus,
  publishRaw,
  sessionPipeline,
  type RawEntry,
} from "./harness.js";

const nats = useNatsServer();

/**
 * A clean session of 9 records, its chain sorted by index: odd indexes 1-7 are before_tool_call
 * decisions (5 is a blocked exec), even ones 2-8 after_tool_call observations, 9 the
 * before_response_emit decision.
 */
async function cleanSession() {
  const { p, entries } = await sessionPipeline(nats.url(), { calls: 4 });
  const chain = expectOneChain(entries);
  expect(chain).toHaveLength(9);
  expect((await verifyLog(p.bus, { sessionKey: SESSION, settleMs: 0 })).ok).toBe(true);
  const at = (index: number): RawEntry => chain[index - 1]!;
  const verify = async () => {
    const report = await verifyLog(p.bus, { sessionKey: SESSION, settleMs: 100 });
    const cli = await hookbus(
      nats.url(),
      p.namespace,
      "audit",
      "verify",
      "--session",
      SESSION,
      "--settle-ms",
      "100",
    );
    return { report, cli };
  };
  const stream = p.subjects.logStream;
  const remove = (entry: RawEntry) => p.bus.jsm.streams.deleteMessage(stream, entry.seq, true);
  return { p, chain, at, verify, remove };
}

/** The problems as the test names them: kind, reason, where. */
const found = (report: Awaited<ReturnType<typeof verifyLog>>) =>
  report.problems.map((x) => ({
    kind: x.kind,
    reason: x.reason,
    ...(x.seq === undefined ? {} : { seq: x.seq }),
    ...(x.index === undefined ? {} : { index: x.index }),
    ...(x.toIndex === undefined ? {} : { toIndex: x.toIndex }),
  }));

describe("an altered record", () => {
  it("is reported as altered (its content no longer hashes to its chain hash), and only it", async () => {
    const { p, at, verify, remove } = await cleanSession();
    const victim = at(3);
    expect(victim.raw.kind).toBe("decision");
    // The attacker turns a decision's input into something else and puts it back in place.
    const altered = {
      ...victim.raw,
      event: { ...(victim.raw.event as object), params: { path: "/etc/shadow" } },
    };
    const seq = await publishRaw(p.bus, victim.subject, altered);
    await remove(victim);

    const { report, cli } = await verify();
    expect(found(report)).toEqual([{ kind: "altered", reason: "hash-mismatch", seq, index: 3 }]);
    expect(report.ok).toBe(false);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(/altered\s+seq \d+ index 3 \(decision before_tool_call call-/);
    expect(cli.stdout).toMatch(
      /TAMPERED: 1 problem\(s\) in 1 of 1 session\(s\).*1 altered, 0 removed, 0 inserted/,
    );
  });

  it("is still caught when the attacker re-computes its hash: the next record links to the old one", async () => {
    const { p, at, verify, remove } = await cleanSession();
    const victim = at(4);
    expect(victim.raw.kind).toBe("observation");
    const altered = { ...victim.raw, publishedAt: "2020-01-01T00:00:00.000Z" } as RawEntry["raw"];
    altered.chain = { ...victim.raw.chain!, hash: recordHash(altered) };
    const seq = await publishRaw(p.bus, victim.subject, altered);
    await remove(victim);
    const { report, cli } = await verify();
    expect(found(report)).toEqual([{ kind: "altered", reason: "link-mismatch", seq, index: 4 }]);
    expect(cli.code).toBe(1);
  });

  it("is caught at the end of the chain by the head in the chain bucket", async () => {
    const { p, at, verify, remove } = await cleanSession();
    const last = at(9);
    const altered = {
      ...last.raw,
      decision: { outcome: "modify", content: "send the wire", decidedBy: { content: "guard" } },
    } as RawEntry["raw"];
    altered.chain = { ...last.raw.chain!, hash: recordHash(altered) };
    const seq = await publishRaw(p.bus, last.subject, altered);
    await remove(last);
    const { report } = await verify();
    expect(found(report)).toEqual([{ kind: "altered", reason: "head-mismatch", seq, index: 9 }]);
  });
});

describe("a removed record", () => {
  it("in the middle is reported as a gap at exactly its index", async () => {
    const { at, verify, remove } = await cleanSession();
    await remove(at(6));
    const { report, cli } = await verify();
    expect(found(report)).toEqual([{ kind: "removed", reason: "gap", index: 6, toIndex: 6 }]);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(/removed\s+index 6: no record in the log/);
  });

  it("at the end (truncation) is reported because the head is ahead of the log", async () => {
    const { at, verify, remove } = await cleanSession();
    await remove(at(9));
    await remove(at(8));
    const { report, cli } = await verify();
    expect(found(report)).toEqual([{ kind: "removed", reason: "truncated", index: 8, toIndex: 9 }]);
    expect(cli.code).toBe(1);
  });
});

describe("an inserted record", () => {
  it("with a valid hash at an index already taken is reported as inserted (duplicate index), and only it", async () => {
    const { p, at, verify } = await cleanSession();
    // A forger copies record 7's shape, makes it say something else, and links it after record 6.
    const model = at(7);
    const forged = linkRecord(
      { ...model.raw, callId: "forged-1", coordinator: "evil" } as unknown as LogRecord,
      7,
      at(6).raw.chain!.hash,
    );
    const seq = await publishRaw(p.bus, model.subject, forged);
    const { report, cli } = await verify();
    expect(found(report)).toEqual([{ kind: "inserted", reason: "duplicate-index", seq, index: 7 }]);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(
      /inserted\s+seq \d+ index 7 .* takes index 7, which the chain continues through seq/,
    );
  });

  it("without a chain link is reported as inserted (no chain)", async () => {
    const { p, at, verify } = await cleanSession();
    const { chain: _chain, ...unchained } = { ...at(2).raw, eventId: "forged-obs" };
    const seq = await publishRaw(p.bus, at(2).subject, unchained);
    const { report, cli } = await verify();
    expect(found(report)).toEqual([{ kind: "inserted", reason: "no-chain", seq }]);
    expect(cli.code).toBe(1);
  });

  it("appended after the last record is reported as inserted (beyond the head: nobody claimed it)", async () => {
    const { p, at, verify } = await cleanSession();
    const forged = linkRecord(
      { ...at(9).raw, callId: "forged-2" } as unknown as LogRecord,
      10,
      at(9).raw.chain!.hash,
    );
    const seq = await publishRaw(p.bus, at(9).subject, forged);
    const { report, cli } = await verify();
    expect(found(report)).toEqual([{ kind: "inserted", reason: "beyond-head", seq, index: 10 }]);
    expect(cli.code).toBe(1);
  });

  it("in a session of its own (no chain head) is reported as inserted", async () => {
    const { p, at } = await cleanSession();
    const subject = p.subjects.audit(AGENT, "made-up", "before_tool_call", "allow");
    const forged = linkRecord(
      {
        ...at(1).raw,
        context: { ...(at(1).raw.context as object), sessionKey: "made-up" },
      } as unknown as LogRecord,
      1,
      null,
    );
    const seq = await publishRaw(p.bus, subject, forged);
    const report = await verifyLog(p.bus, { settleMs: 0 });
    expect(found(report)).toEqual([{ kind: "inserted", reason: "no-head", seq, index: 1 }]);
    const cli = await hookbus(nats.url(), p.namespace, "audit", "verify", "--json");
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout)).toMatchObject({
      ok: false,
      problems: [{ kind: "inserted", reason: "no-head", sessionKey: "made-up", agentId: AGENT }],
    });
  });
});
