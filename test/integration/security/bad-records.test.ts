/**
 * Issue 9, item 4: one undecodable record must not stop an audit. Readers skip it, report
 * HOOKBUS_BAD_RECORD with its sequence, and go on.
 */
import { describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { readLog, type ReadLogStats } from "../../../src/log/reader.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";

const nats = useNatsServer();

async function hookbus(...args: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const out: Output = { print: (l) => stdout.push(l), error: (l) => stderr.push(l) };
  const code = await main([...args, "--server", nats.url()], out);
  return { code, stdout, stderr };
}

describe("audit readers and bad records", () => {
  it("skip a poisoned record, report its sequence, and read the records after it", async () => {
    const p = await startPipeline(nats.url());
    const run = { agentId: "agent-a", sessionKey: "s-1", runId: "r-1" };
    await p.client.observe("llm_input", run, { messages: [] }, { eventId: "before" });
    // What an agent with write access could once do: garbage straight into the log.
    const subject = p.subjects.audit("agent-a", "s-1", "llm_input", "observed");
    const poisoned = await p.bus.js.publish(subject, new TextEncoder().encode("{not json"));
    await p.bus.js.publish(subject, new TextEncoder().encode(JSON.stringify({ v: 1, kind: "??" })));
    await p.client.observe("llm_input", run, { messages: [] }, { eventId: "after" });

    const stats: ReadLogStats = { delivered: 0 };
    const skipped: unknown[] = [];
    const ids: string[] = [];
    for await (const entry of readLog(p.bus, { stats, onBadRecord: (e) => skipped.push(e) })) {
      if (entry.record.kind === "observation") ids.push(entry.record.eventId);
    }
    expect(ids).toEqual(["before", "after"]);
    expect(stats.badRecords).toEqual([poisoned.seq, poisoned.seq + 1]);
    expect(skipped).toHaveLength(2);
    expect(skipped[0]).toMatchObject({
      code: "HOOKBUS_BAD_RECORD",
      details: { seq: poisoned.seq },
    });

    const query = await hookbus("audit", "query", "--namespace", p.namespace);
    expect(query.code).toBe(0);
    expect(query.stderr.join("\n")).toContain(`HOOKBUS_BAD_RECORD: skipped 2 record(s)`);
    expect(query.stderr.join("\n")).toContain(`seq ${poisoned.seq}, ${poisoned.seq + 1}`);

    const session = await hookbus("audit", "session", "s-1", "--namespace", p.namespace);
    expect(session.code).toBe(0);
    expect(session.stdout.join("\n")).toContain("after");
  });
});
