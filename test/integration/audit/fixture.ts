/**
 * A real log to query: coordinator, policy workers and an agent (HookbusClient) on a real NATS
 * server, driven through several agents, sessions, hooks and outcomes, with a shadow policy that
 * would block some calls, a call the coordinator rejects, a late verdict and an observation.
 *
 * Every record gets a label (its call id, `late:<call id>` or `obs:<event id>`); `EXPECTED` is
 * the whole log in order, so each test can say exactly which records a query must return.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { expect } from "vitest";
import { Bus, definePolicy, type LogRecord } from "../../../src/index.js";
import { queryLog, type AuditEntry } from "../../../src/audit/index.js";
import { noShellPolicy, sendInvalidToolCall, sloth } from "../../support/audit-scenario.js";
import { sleep, startPipeline, until, type Pipeline } from "../pipeline/harness.js";

export const SUPPORT = "support-bot";
export const OTHER = "other-bot";
/** Ids with characters that must be encoded in subject tokens. */
export const OPS = "ops.bot";
export const NIGHT = "night run";

export interface ExpectedRecord {
  label: string;
  agentId: string;
  sessionKey: string;
  hook: string;
  kind: "allow" | "modify" | "block" | "reply" | "error" | "late" | "observed";
  /** Policies asked (decisions) or the late policy. */
  policies: string[];
  shadowChanged: boolean;
  /** Stored after the pause between the two phases. */
  phase: "A" | "B";
}

const TOOL_POLICIES = ["no-shell", "candidate"];

const rec = (
  label: string,
  agentId: string,
  sessionKey: string,
  hook: string,
  kind: ExpectedRecord["kind"],
  policies: string[],
  phase: "A" | "B",
  shadowChanged = false,
): ExpectedRecord => ({ label, agentId, sessionKey, hook, kind, policies, shadowChanged, phase });

/** The whole log, in order. */
export const EXPECTED: readonly ExpectedRecord[] = [
  rec("bar-1", SUPPORT, "conv-1", "before_agent_reply", "reply", ["greeter"], "A"),
  rec("llm-1", SUPPORT, "conv-1", "before_llm_call", "allow", ["sloth"], "A"),
  rec("exec-1", SUPPORT, "conv-1", "before_tool_call", "block", TOOL_POLICIES, "A"),
  rec("read-1", SUPPORT, "conv-1", "before_tool_call", "allow", TOOL_POLICIES, "A"),
  rec("obs:obs-1", SUPPORT, "conv-1", "after_tool_call", "observed", [], "A"),
  rec("emit-1", SUPPORT, "conv-1", "before_response_emit", "modify", ["redactor"], "A"),
  rec("other-1", OTHER, "conv-1", "before_tool_call", "allow", TOOL_POLICIES, "A"),
  rec("del-1", SUPPORT, "conv-2", "before_tool_call", "allow", TOOL_POLICIES, "B", true),
  rec("llm-slow", SUPPORT, "conv-2", "before_llm_call", "allow", ["sloth"], "B"),
  rec("late:llm-slow", SUPPORT, "conv-2", "before_llm_call", "late", ["sloth"], "B"),
  rec("exec-2", OPS, NIGHT, "before_tool_call", "block", TOOL_POLICIES, "B"),
  rec("rm-1", OPS, NIGHT, "before_tool_call", "allow", TOOL_POLICIES, "B", true),
  rec("bad-1", OPS, NIGHT, "before_tool_call", "error", [], "B"),
  rec("emit-2", OPS, NIGHT, "before_response_emit", "allow", ["redactor"], "B"),
];

/** The labels of the expected records that satisfy `keep`, in log order. */
export function expectedLabels(keep: (r: ExpectedRecord) => boolean): string[] {
  return EXPECTED.filter(keep).map((r) => r.label);
}

export function label(record: LogRecord): string {
  switch (record.kind) {
    case "decision":
    case "error":
      return record.callId;
    case "late":
      return `late:${record.callId}`;
    case "observation":
      return `obs:${record.eventId}`;
    case "approval":
      return `approval:${record.callId}`;
    case "erasure":
      return `erasure:${record.erasureId}`;
  }
}

export async function collect(query: AsyncIterable<AuditEntry>): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  for await (const entry of query) entries.push(entry);
  return entries;
}

export const labels = (entries: readonly AuditEntry[]) => entries.map((e) => label(e.record));

export const SLOTH_TIMEOUT_MS = 250;

const greeter = definePolicy({
  name: "greeter",
  version: "1.2.0",
  hooks: {
    before_agent_reply: (event) =>
      event.cleanedBody.startsWith("hi")
        ? { reply: { text: "Hello!" }, reason: "greeting" }
        : undefined,
  },
});

const candidate = definePolicy({
  name: "candidate",
  version: "0.1.0",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "rm" || event.toolName === "delete_file"
        ? { block: true, blockReason: "destructive tool" }
        : undefined,
  },
});

const redactor = definePolicy({
  name: "redactor",
  hooks: {
    before_response_emit: (event) =>
      event.content.includes("secret") ? { content: "[redacted]" } : undefined,
  },
});

export interface AuditLog {
  namespace: string;
  /** On a connection of its own (the pipeline is stopped once the log is written). */
  bus: Bus;
  nc: NatsConnection;
  /** A time between the two phases (server clock): phase A is before it, phase B after. */
  boundary: Date;
  close(): Promise<void>;
}

const ctx = (agentId: string, sessionKey: string, extra: Record<string, string> = {}) => ({
  agentId,
  sessionKey,
  runId: "run-1",
  ...extra,
});

async function toolCall(
  p: Pipeline,
  agentId: string,
  sessionKey: string,
  id: string,
  tool: string,
) {
  return p.client.call(
    "before_tool_call",
    ctx(agentId, sessionKey, { toolCallId: `t-${id}` }),
    { toolName: tool, toolCallId: `t-${id}`, params: { path: "/tmp/x" } },
    { callId: id },
  );
}

/** Runs the pipeline through the scenario of `EXPECTED` and returns a reader on the finished log. */
export async function buildAuditLog(url: string): Promise<AuditLog> {
  const p = await startPipeline(url, {
    registry: {
      policies: [
        { name: "greeter", hooks: ["before_agent_reply"], priority: 10 },
        {
          name: "sloth",
          hooks: ["before_llm_call"],
          priority: 10,
          timeoutMs: SLOTH_TIMEOUT_MS,
          failMode: "fail-open",
        },
        { name: "no-shell", hooks: ["before_tool_call"], priority: 100 },
        {
          name: "candidate",
          hooks: ["before_tool_call"],
          priority: 90,
          mode: "shadow",
          failMode: "fail-open",
        },
        { name: "redactor", hooks: ["before_response_emit"], priority: 50 },
      ],
    },
    policies: [greeter, sloth, noShellPolicy(), candidate, redactor],
  });
  const { client } = p;
  const support1 = ctx(SUPPORT, "conv-1");

  // Phase A
  const replied = await client.call(
    "before_agent_reply",
    support1,
    { cleanedBody: "hi there" },
    { callId: "bar-1" },
  );
  expect(replied.decision.outcome).toBe("reply");
  const llm = await client.call(
    "before_llm_call",
    support1,
    { messages: [{ role: "user", content: "hello" }], model: "fast" },
    { callId: "llm-1" },
  );
  expect(llm.decision.outcome).toBe("allow");
  expect((await toolCall(p, SUPPORT, "conv-1", "exec-1", "exec")).decision.outcome).toBe("block");
  expect((await toolCall(p, SUPPORT, "conv-1", "read-1", "read_file")).decision.outcome).toBe(
    "allow",
  );
  await client.observe(
    "after_tool_call",
    ctx(SUPPORT, "conv-1", { toolCallId: "t-read-1" }),
    { toolName: "read_file", toolCallId: "t-read-1", params: { path: "/tmp/x" }, result: "ok" },
    { eventId: "obs-1" },
  );
  const emitted = await client.call(
    "before_response_emit",
    support1,
    { content: "the secret is 42", allContent: ["the secret is 42"] },
    { callId: "emit-1" },
  );
  expect(emitted.decision.outcome).toBe("modify");
  expect((await toolCall(p, OTHER, "conv-1", "other-1", "read_file")).decision.outcome).toBe(
    "allow",
  );

  // A legit sleep: time passing is the point (phase B's stored times must be ≥ 40 ms after
  // phase A's, checked below), not waiting for something to happen.
  await sleep(60);

  // Phase B
  expect((await toolCall(p, SUPPORT, "conv-2", "del-1", "delete_file")).decision.outcome).toBe(
    "allow",
  );
  const slow = await client.call(
    "before_llm_call",
    ctx(SUPPORT, "conv-2"),
    { messages: [{ role: "user", content: "hello" }], model: "slow" },
    { callId: "llm-slow" },
  );
  expect(slow.decision.outcome).toBe("allow");
  // The late verdict lands in the log before anything else happens, so the order is fixed.
  await until(
    async () =>
      (await collect(queryLog(p.bus, { outcome: "late" }))).some(
        (e) => label(e.record) === "late:llm-slow",
      ),
    5000,
    "the late verdict of sloth",
  );
  expect((await toolCall(p, OPS, NIGHT, "exec-2", "exec")).decision.outcome).toBe("block");
  expect((await toolCall(p, OPS, NIGHT, "rm-1", "rm")).decision.outcome).toBe("allow");

  // A call the coordinator rejects (its event fails the schema), sent raw as a broken agent would.
  expect(await sendInvalidToolCall(p, "bad-1", ctx(OPS, NIGHT))).toBe("HOOKBUS_INVALID_EVENT");
  const quiet = await client.call(
    "before_response_emit",
    ctx(OPS, NIGHT),
    { content: "all good", allContent: ["all good"] },
    { callId: "emit-2" },
  );
  expect(quiet.decision.outcome).toBe("allow");

  const namespace = p.namespace;
  await p.stop();

  const nc = await connect({ servers: url, name: `${namespace}-audit-reader` });
  const bus = await Bus.open(nc, { namespace });
  const all = await collect(queryLog(bus));
  // The scenario produced exactly the log the tests expect, in this order.
  expect(labels(all)).toEqual(EXPECTED.map((r) => r.label));
  const lastA = all[EXPECTED.findLastIndex((r) => r.phase === "A")]!;
  const firstB = all[EXPECTED.findIndex((r) => r.phase === "B")]!;
  expect(firstB.storedAt.getTime() - lastA.storedAt.getTime()).toBeGreaterThanOrEqual(40);
  const boundary = new Date(Math.floor((lastA.storedAt.getTime() + firstB.storedAt.getTime()) / 2));
  return { namespace, bus, nc, boundary, close: () => nc.drain() };
}
