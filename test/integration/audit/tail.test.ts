/**
 * Following the log: `tailLog` and `hookbus audit tail` receive records stored after they
 * started (and only the ones matching their filters), and stop on abort / SIGINT / --limit.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { tailLog, type AuditEntry } from "../../../src/audit/index.js";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { Bus, definePolicy, isHookbusError } from "../../../src/index.js";
import {
  startPipeline,
  uniqueNamespace,
  until,
  useNatsServer,
  type Pipeline,
} from "../pipeline/harness.js";
import { label } from "./fixture.js";

const nats = useNatsServer();
const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));

const noShell = definePolicy({
  name: "no-shell",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "exec"
        ? {
            block: true,
            blockReason: typeof event.params.why === "string" ? event.params.why : "no shell",
          }
        : undefined,
  },
});

function start(): Promise<Pipeline> {
  return startPipeline(nats.url(), {
    namespace: uniqueNamespace("t"),
    registry: { policies: [{ name: "no-shell", hooks: ["before_tool_call"], priority: 10 }] },
    policies: [noShell],
  });
}

function toolCall(p: Pipeline, agentId: string, callId: string, tool = "exec") {
  return p.client.call(
    "before_tool_call",
    { agentId, sessionKey: "s-1", runId: "run-1" },
    { toolName: tool, params: {} },
    { callId },
  );
}

/** Iterates in the background, collecting what arrives. */
function drain(query: AsyncIterable<AuditEntry>): { seen: AuditEntry[]; done: Promise<void> } {
  const seen: AuditEntry[] = [];
  const done = (async () => {
    for await (const entry of query) seen.push(entry);
  })();
  return { seen, done };
}

describe("tailLog", () => {
  it("delivers matching records stored after it started, and ends when aborted", async () => {
    const p = await start();
    await toolCall(p, "agent-a", "before-1");

    const abort = new AbortController();
    const tail = await tailLog(p.bus, { agentId: "agent-a" }, { signal: abort.signal });
    const { seen, done } = drain(tail);

    await toolCall(p, "agent-b", "other-agent");
    await toolCall(p, "agent-a", "after-1");
    await p.client.observe(
      "after_tool_call",
      { agentId: "agent-a", sessionKey: "s-1", runId: "run-1" },
      { toolName: "exec", params: {}, blocked: true },
      { eventId: "obs-a" },
    );
    await toolCall(p, "agent-a", "after-2", "read_file");
    await until(() => seen.length >= 3, 5000, "three tailed records");
    expect(seen.map((e) => label(e.record))).toEqual(["after-1", "obs:obs-a", "after-2"]);
    expect(seen.map((e) => e.address.kind)).toEqual(["block", "observed", "allow"]);
    // The server filtered on the agent: agent-b's record was never delivered.
    expect(tail.stats.filterSubject).toBe(`${p.namespace}.audit.agent-a.*.*.*`);
    expect(tail.stats.delivered).toBe(3);

    const abortedAt = performance.now();
    abort.abort();
    await done;
    expect(performance.now() - abortedAt).toBeLessThan(2000);
    // Nothing more arrives after the abort.
    await toolCall(p, "agent-a", "after-abort");
    expect(seen).toHaveLength(3);
  });

  it("applies client-side filters and limit, and can start in the past with since", async () => {
    const p = await start();
    const startedAt = new Date(Date.now() - 1000);
    await toolCall(p, "agent-a", "history-1", "read_file");
    await toolCall(p, "agent-a", "history-2");

    const blocks = await tailLog(p.bus, { since: startedAt, outcome: "block", limit: 2 });
    const { seen, done } = drain(blocks);
    await until(() => seen.length >= 1, 5000, "the blocked record from history");
    await toolCall(p, "agent-a", "live-allow", "read_file");
    await toolCall(p, "agent-a", "live-block");
    // Ends by itself at the limit.
    await done;
    expect(seen.map((e) => label(e.record))).toEqual(["history-2", "live-block"]);

    const abort = new AbortController();
    const byPolicy = await tailLog(p.bus, { policy: "nobody" }, { signal: abort.signal });
    const none = drain(byPolicy);
    await toolCall(p, "agent-a", "unmatched");
    await until(() => byPolicy.stats.delivered >= 1, 5000, "the record to be read");
    abort.abort();
    await none.done;
    expect(none.seen).toEqual([]);
  });

  it("rejects a bad filter and a namespace without a log", async () => {
    const nc = await connect({ servers: nats.url() });
    try {
      const bus = await Bus.open(nc, { namespace: uniqueNamespace("t") });
      const missing = await tailLog(bus, {}).catch((e: unknown) => e);
      expect(isHookbusError(missing, "HOOKBUS_LOG_UNAVAILABLE")).toBe(true);
      const bad = await tailLog(bus, { outcome: "nope" as "allow" }).catch((e: unknown) => e);
      expect(isHookbusError(bad, "HOOKBUS_INVALID_ARGUMENT")).toBe(true);
    } finally {
      await nc.drain();
    }
  });
});

describe("hookbus audit tail", () => {
  it("prints records stored after it started, filtered, and stops after --limit", async () => {
    const p = await start();
    await toolCall(p, "agent-a", "before-1");
    const stdout: string[] = [];
    const stderr: string[] = [];
    const out: Output = { print: (l) => stdout.push(l), error: (l) => stderr.push(l) };
    const exit = main(
      [
        "audit",
        "tail",
        "--agent",
        "agent-a",
        "--limit",
        "2",
        "--json",
        "--server",
        nats.url(),
        "--namespace",
        p.namespace,
      ],
      out,
    );
    await until(() => stderr.some((l) => l.startsWith("following ")), 5000, "the tail to start");
    expect(stderr).toEqual([`following ${p.namespace}.audit.agent-a.*.*.* (Ctrl-C to stop)`]);
    await toolCall(p, "agent-b", "other-agent");
    await toolCall(p, "agent-a", "after-1");
    await toolCall(p, "agent-a", "after-2", "read_file");
    expect(await exit).toBe(0);
    const entries = stdout.map((l) => JSON.parse(l) as { seq: number; record: unknown });
    expect(entries.map((e) => (e.record as { callId: string }).callId)).toEqual([
      "after-1",
      "after-2",
    ]);
  });

  it("prints a table row per record with values escaped, and exits 0 on SIGINT", async () => {
    const p = await start();
    const child = spawn(
      process.execPath,
      [
        cli,
        "audit",
        "tail",
        "--hook",
        "before_tool_call",
        "--server",
        nats.url(),
        "--namespace",
        p.namespace,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.once("exit", (code) => resolve(code)),
    );
    try {
      // stderr and stdout are separate pipes: the header may arrive after the "following" line.
      await until(
        () => stderr.includes("following ") && stdout.includes("\n"),
        20_000,
        `the CLI tail to start (${stderr})`,
      );
      expect(stdout).toMatch(
        /^time\s+agent\s+session\s+hook\s+outcome\s+decided by \/ reason\s+latency\n$/,
      );
      // A reason with a newline and a terminal escape cannot forge a row or drive the terminal.
      // (Ids with control characters are refused by the coordinator: docs/limits.md.)
      await p.client.call(
        "before_tool_call",
        { agentId: "agent-x", sessionKey: "s-1", runId: "run-1" },
        { toolName: "exec", params: { why: "evil\nreason\u001b[2J" } },
        { callId: "evil-1" },
      );
      await until(() => stdout.split("\n").length >= 3, 5000, `a row (${stdout})`);
      const rows = stdout.trimEnd().split("\n");
      expect(rows).toHaveLength(2);
      expect(rows[1]).toContain("blocked by no-shell: evil\\nreason\\u001b[2J");
      expect(rows[1]).toMatch(/before_tool_call\s+block\s+blocked by no-shell: \S+\s+\d+ ms$/);
      expect(stdout).not.toContain("\u001b");
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 30_000);
});
