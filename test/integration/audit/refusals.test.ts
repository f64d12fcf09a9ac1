/**
 * Issue 22.6: every refusal is counted. A tool call refused by the agent SDK's after_llm_call
 * gate, or by an adapter (a tool not offered this turn), is decided where no coordinator sees it;
 * it must still appear as a block, with its policy and reason, in `audit query --outcome block`,
 * the session timeline, the index (`audit stats`, the UI's search) and under `--run`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Bus, definePolicy, isHookbusBlockedError } from "../../../src/index.js";
import { queryLog, sessionTimeline } from "../../../src/audit/index.js";
import { subjectMismatches } from "../../../src/audit/verify-subject.js";
import { HookbusRun } from "../../../src/adapters/core/run.js";
import { gateToolCall } from "../../../src/adapters/core/tool-call.js";
import {
  indexStats,
  queryIndex,
  startIndexer,
  type Indexer,
  type PgPool,
} from "../../../src/indexer/index.js";
import { startPipeline, until, useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { usePostgres } from "../../support/postgres.js";
import { collect } from "./fixture.js";

const nats = useNatsServer();
const postgres = usePostgres();

/** Keeps only the tool calls whose name is not `send_email` (an after_llm_call allowlist). */
const mailGuard = definePolicy({
  name: "mail-guard",
  hooks: {
    after_llm_call: (event) => ({
      toolCalls: event.toolCalls.filter((c) => c.name !== "send_email"),
    }),
  },
});

/** A before_tool_call policy, so tool calls go to the coordinator (no fast path). */
const noShell = definePolicy({
  name: "no-shell",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "exec" ? { block: true, blockReason: "no shell" } : undefined,
  },
});

const AGENT = "mailer";
const SESSION = "s-refusals";

let p: Pipeline;
/** The log, read on a connection of its own (the harness stops the pipeline after each test). */
let bus: Bus;
let nc: NatsConnection;
let namespace: string;
beforeAll(async () => {
  p = await startPipeline(nats.url(), {
    registry: {
      policies: [
        { name: "mail-guard", hooks: ["after_llm_call"], priority: 10 },
        { name: "no-shell", hooks: ["before_tool_call"], priority: 10 },
      ],
    },
    policies: [mailGuard, noShell],
  });
  const ctx = { agentId: AGENT, sessionKey: SESSION, runId: "run-a" };
  // run-a: the model asks for two tools; the gate refuses send_email (not in the allowlist).
  await p.client.afterLlmCall(ctx, {
    toolCalls: [
      { id: "c1", name: "read_file", arguments: "{}" },
      { id: "c2", name: "send_email", arguments: "{}" },
    ],
  });
  await p.client.beforeToolCall(
    { ...ctx, toolCallId: "c1" },
    { toolName: "read_file", toolCallId: "c1", params: {} },
  );
  const refused = await p.client
    .beforeToolCall(
      { ...ctx, toolCallId: "c2" },
      { toolName: "send_email", toolCallId: "c2", params: { to: "x@example.com" } },
    )
    .catch((e: unknown) => e);
  expect(isHookbusBlockedError(refused) && refused.source).toBe("after_llm_call_gate");
  // run-b: an adapter refuses a tool the model was not offered this turn.
  const run = new HookbusRun({
    client: p.client,
    agentId: AGENT,
    sessionKey: SESSION,
    runId: "run-b",
  });
  run.offeredTools = new Set(["read_file", "exec"]);
  const notOffered = await gateToolCall(run, {
    toolName: "delete_file",
    toolCallId: "c3",
    input: { path: "/" },
  }).catch((e: unknown) => e);
  expect(isHookbusBlockedError(notOffered)).toBe(true);
  // run-b: a block the coordinator decided is counted once (its decision record).
  const decided = await gateToolCall(run, {
    toolName: "exec",
    toolCallId: "c4",
    input: { cmd: "ls" },
  }).catch((e: unknown) => e);
  expect(isHookbusBlockedError(decided)).toBe(true);
  await p.client.close(); // waits for the observations in flight
  namespace = p.namespace;
  nc = await connect({ servers: nats.url(), name: `${namespace}-reader` });
  bus = await Bus.open(nc, { namespace });
}, 60_000);
afterAll(() => nc?.close());

const blocks = () => collect(queryLog(bus, { sessionKey: SESSION, outcome: "block" }));

describe("refusals no coordinator decided", () => {
  it("audit query --outcome block returns the gate's and the adapter's refusals, and the decided block once", async () => {
    const entries = await blocks();
    const rows = entries.map((e) => [e.record.kind, e.address.hook, e.record.context.runId]);
    expect(rows).toEqual([
      ["observation", "after_tool_call", "run-a"],
      ["observation", "after_tool_call", "run-b"],
      ["decision", "before_tool_call", "run-b"],
    ]);
    const [gate, adapter] = entries;
    expect(gate!.record.kind === "observation" && gate!.record.event).toMatchObject({
      toolName: "send_email",
      blocked: true,
      blockSource: "after_llm_call_gate",
      blockedBy: "mail-guard",
      blockReason: 'tool call "c2" is not in the after_llm_call allowlist',
    });
    expect(adapter!.record.kind === "observation" && adapter!.record.event).toMatchObject({
      toolName: "delete_file",
      blockSource: "adapter",
    });
    // The subject says what the content says (audit verify's check).
    for (const e of entries) expect(subjectMismatches(namespace, e.subject, e.record)).toEqual([]);
  });

  it("--policy finds the refusal its policy decided; --run keeps one run", async () => {
    const byPolicy = await collect(
      queryLog(bus, { sessionKey: SESSION, outcome: "block", policy: "mail-guard" }),
    );
    expect(byPolicy.map((e) => e.record.kind)).toEqual(["observation"]);
    const runA = await collect(queryLog(bus, { sessionKey: SESSION, runId: "run-a" }));
    expect(new Set(runA.map((e) => e.record.context.runId))).toEqual(new Set(["run-a"]));
    expect(runA.length).toBeGreaterThanOrEqual(3); // after_llm_call, read_file, the refusal
  });

  it("the timeline shows the refusal as a block with its policy and reason", async () => {
    const steps = await sessionTimeline(bus, SESSION, { runId: "run-a" });
    const refusal = steps.find((s) => s.kind === "observation" && s.outcome === "block");
    expect(refusal).toMatchObject({
      outcome: "block",
      blockedBy: "mail-guard",
      blockReason: 'tool call "c2" is not in the after_llm_call allowlist',
    });
    expect(refusal!.summary).toBe(
      'tool send_email blocked by mail-guard: tool call "c2" is not in the after_llm_call allowlist (refused by the after_llm_call gate)',
    );
    expect(steps.every((s) => s.record.context.runId === "run-a")).toBe(true);
  });

  describe("in the index", () => {
    let pool: PgPool;
    let indexer: Indexer;
    beforeAll(async () => {
      ({ pool } = await postgres.database());
      indexer = await startIndexer({ bus: bus, pool });
      await until(async () => (await indexer.lag()).records === 0, 20_000, "the index caught up");
    }, 60_000);
    afterAll(() => indexer?.stop());

    it("audit stats counts every refusal as a block, per run too", async () => {
      const count = (rows: { hook: string; outcome: string; count: number }[]) =>
        rows.filter((r) => r.outcome === "block").map((r) => [r.hook, r.count]);
      const all = await indexStats(pool, namespace);
      expect(count(all.byHookOutcome)).toEqual([
        ["after_tool_call", 2],
        ["before_tool_call", 1],
      ]);
      const runB = await indexStats(pool, namespace, { runId: "run-b" });
      expect(count(runB.byHookOutcome)).toEqual([
        ["after_tool_call", 1],
        ["before_tool_call", 1],
      ]);
    });

    it("the index answers --outcome block, --blocked-by, --policy and --run", async () => {
      const q = async (f: Parameters<typeof queryIndex>[2]) =>
        (await queryIndex(pool, namespace, f)).entries.map((e) => e.seq);
      const logBlocks = (await blocks()).map((e) => e.seq);
      expect(await q({ outcome: "block" })).toEqual(logBlocks);
      expect(await q({ blockedBy: "mail-guard" })).toEqual([logBlocks[0]]);
      expect(await q({ policy: "mail-guard", outcome: "block" })).toEqual([logBlocks[0]]);
      expect(await q({ runId: "run-b", outcome: "block" })).toEqual(logBlocks.slice(1));
    });
  });
});
