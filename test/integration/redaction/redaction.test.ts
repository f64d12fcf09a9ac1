/**
 * Redaction in the log, through the real pipeline: rules from the registry document mask or
 * hash values of records before they are written (and before their chain hash), the record lists
 * the concrete paths, the agent still gets the unredacted decision, observations are redacted by
 * the agent, bad rules are refused by `hookbus registry apply`, and the chain verifies.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { definePolicy, HookbusClient, type DecisionRecord } from "../../../src/index.js";
import { startPipeline, useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { hookbus } from "../tamper/harness.js";
import { hashValue, REDACTION_MASK } from "../../../src/log/redaction.js";
import { verifyLog } from "../../../src/audit/verify.js";
import { type RegistryDocumentInput } from "../../../src/registry/document.js";

const nats = useNatsServer();

const run = { agentId: "agent-r", sessionKey: "sess-r", runId: "run-1" };
const emit = (content: string) => ({ content, allContent: ["Hello!", content] });

const dlp = definePolicy({
  name: "dlp",
  version: "2.0.0",
  hooks: {
    before_response_emit: (e) =>
      e.content.includes("hunter2")
        ? { block: true, blockReason: "the reply leaks a password" }
        : /\d{3}-\d{4}/.test(e.content)
          ? { content: e.content.replace(/\d{3}-\d{4}/g, "XXX-XXXX") }
          : undefined,
  },
});

const policies: RegistryDocumentInput["policies"] = [
  { name: "dlp", hooks: ["before_response_emit"], priority: 20 },
];

/** Every string anywhere in a value (to prove a secret is nowhere in a stored record). */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value !== "object" || value === null) return [];
  return Object.values(value).flatMap(strings);
}

async function onlyRecord(p: Pipeline, callId: string): Promise<DecisionRecord> {
  return (await p.decisionRecord(callId)).record;
}

async function chainIsClean(p: Pipeline): Promise<void> {
  const report = await verifyLog(p.bus);
  expect(report.findings).toEqual([]);
  expect(report.ok).toBe(true);
}

describe("masking what a blocked reply would have leaked", () => {
  it("masks before_response_emit content in the log only when the decision blocked (when: block)", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies,
        redact: [
          {
            hooks: ["before_response_emit"],
            pointer: "/event/content",
            action: "mask",
            when: "block",
          },
          {
            hooks: ["before_response_emit"],
            pointer: "/event/allContent/*",
            action: "mask",
            when: "block",
          },
        ],
      },
      policies: [dlp],
    });
    const blocked = await p.client.call(
      "before_response_emit",
      run,
      emit("my password is hunter2"),
      {
        callId: "emit-blocked",
      },
    );
    expect(blocked.decision).toMatchObject({
      outcome: "block",
      blockReason: "the reply leaks a password",
      blockedBy: "dlp",
    });
    const record = await onlyRecord(p, "emit-blocked");
    expect(record.event).toEqual({
      content: REDACTION_MASK,
      allContent: [REDACTION_MASK, REDACTION_MASK],
    });
    expect(record.redacted).toEqual([
      { path: "/event/content", action: "mask" },
      { path: "/event/allContent/0", action: "mask" },
      { path: "/event/allContent/1", action: "mask" },
    ]);
    expect(strings(record).some((s) => s.includes("hunter2"))).toBe(false);
    expect(record.registryRevision).toBe(p.revision);

    // Allowed: nothing is masked and the record says so (no `redacted`).
    await p.client.call("before_response_emit", run, emit("all good"), { callId: "emit-ok" });
    const allowed = await onlyRecord(p, "emit-ok");
    expect(allowed.event).toEqual(emit("all good"));
    expect(allowed.redacted).toBeUndefined();

    await chainIsClean(p);
  });
});

describe("the agent is not redacted", () => {
  it("gets the decision the policies made while the log holds it masked, also when it retries the call", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies,
        redact: [
          { pointer: "/event/content", action: "mask" },
          { pointer: "/event/allContent/*", action: "mask" },
          { pointer: "/decision/content", action: "mask" },
          { pointer: "/outcomes/*/verdict/content", action: "mask" },
        ],
      },
      policies: [dlp],
    });
    const event = emit("call me at 555-0100");
    const got = await p.client.call("before_response_emit", run, event, { callId: "emit-pii" });
    expect(got.decision).toEqual({
      outcome: "modify",
      content: "call me at XXX-XXXX",
      decidedBy: { content: ["dlp"] },
    });
    const record = await onlyRecord(p, "emit-pii");
    expect(record.decision).toEqual({
      outcome: "modify",
      content: REDACTION_MASK,
      decidedBy: { content: ["dlp"] },
    });
    expect(record.outcomes[0]!.verdict).toEqual({ content: REDACTION_MASK });
    expect(record.redacted?.map((r) => r.path)).toEqual([
      "/event/content",
      "/event/allContent/0",
      "/event/allContent/1",
      "/decision/content",
      "/outcomes/0/verdict/content",
    ]);
    expect(strings(record).some((s) => s.includes("555-0100"))).toBe(false);

    // A retry of the call (same id) is stored once; it is answered unredacted too.
    const retried = await p.client.call("before_response_emit", run, event, { callId: "emit-pii" });
    expect(retried.decision).toEqual(got.decision);
    expect(retried.recordSeq).toBe(got.recordSeq);
    await chainIsClean(p);
  });
});

describe("hash instead of mask", () => {
  const hashing: RegistryDocumentInput = {
    policies: [{ name: "dlp", hooks: ["before_tool_call"], priority: 1 }],
    redact: [
      { hooks: ["before_tool_call"], pointer: "/event/params/token", action: "hash" },
      { hooks: ["after_tool_call"], pointer: "/event/params/token", action: "hash" },
    ],
  };
  const toolCtx = { ...run, toolName: "api", toolCallId: "t-1" };
  const toolEvent = { toolName: "api", toolCallId: "t-1", params: { url: "/x", token: "tok-123" } };
  const noop = definePolicy({ name: "dlp", hooks: { before_tool_call: () => undefined } });

  it("writes sha256:<hex> of the canonical JSON value without a key", async () => {
    const p = await startPipeline(nats.url(), { registry: hashing, policies: [noop] });
    const got = await p.client.call("before_tool_call", toolCtx, toolEvent, { callId: "h-1" });
    expect(got.decision.outcome).toBe("allow");
    const record = await onlyRecord(p, "h-1");
    expect(record.event.params).toEqual({ url: "/x", token: hashValue("tok-123") });
    expect(hashValue("tok-123")).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(record.redacted).toEqual([{ path: "/event/params/token", action: "hash" }]);
    await chainIsClean(p);
  });

  it("writes hmac-sha256:<hex> keyed with HOOKBUS_REDACTION_KEY (coordinator and agent)", async () => {
    const key = "test-key-0123456789abcdef";
    const p = await startPipeline(nats.url(), {
      registry: hashing,
      policies: [noop],
      coordinator: { redactionKey: key },
    });
    await p.client.call("before_tool_call", toolCtx, toolEvent, { callId: "h-2" });
    const record = await onlyRecord(p, "h-2");
    expect(record.event.params).toEqual({ url: "/x", token: hashValue("tok-123", key) });
    expect(hashValue("tok-123", key)).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(hashValue("tok-123", key)).not.toBe(hashValue("tok-123"));

    // An agent with the same key hashes its observations the same way, so they can be matched.
    const agent = await HookbusClient.connect({
      nc: p.connections.agent,
      namespace: p.namespace,
      redactionKey: key,
    });
    try {
      await agent.observe(
        "after_tool_call",
        toolCtx,
        { ...toolEvent, result: "ok", durationMs: 2 },
        { eventId: "obs-h" },
      );
    } finally {
      await agent.close();
    }
    const observation = (await p.readLog()).find(
      (r) => r.record.kind === "observation" && r.record.eventId === "obs-h",
    )!.record;
    expect((observation as { event: { params: unknown } }).event.params).toEqual({
      url: "/x",
      token: hashValue("tok-123", key),
    });
    expect(observation.redacted).toEqual([{ path: "/event/params/token", action: "hash" }]);
    await chainIsClean(p);
  });
});

describe("wildcards into the outcomes", () => {
  it("/outcomes/*/verdict/content reaches every policy's verdict, enforced and shadow, listed one by one", async () => {
    const shadow = definePolicy({
      name: "dlp-next",
      hooks: { before_response_emit: (e) => ({ content: e.content.toUpperCase() }) },
    });
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          ...policies,
          { name: "dlp-next", hooks: ["before_response_emit"], priority: 10, mode: "shadow" },
        ],
        redact: [
          { pointer: "/outcomes/*/verdict/content", action: "mask" },
          { pointer: "/shadow/decision/content", action: "hash" },
        ],
      },
      policies: [dlp, shadow],
    });
    const got = await p.client.call("before_response_emit", run, emit("ring 555-0100"), {
      callId: "emit-w",
    });
    expect(got.decision).toMatchObject({ outcome: "modify", content: "ring XXX-XXXX" });
    const record = await onlyRecord(p, "emit-w");
    expect(record.outcomes.map((o) => [o.policy, o.verdict])).toEqual([
      ["dlp", { content: REDACTION_MASK }],
      ["dlp-next", { content: REDACTION_MASK }],
    ]);
    expect(record.redacted).toEqual([
      { path: "/outcomes/0/verdict/content", action: "mask" },
      { path: "/outcomes/1/verdict/content", action: "mask" },
      { path: "/shadow/decision/content", action: "hash" },
    ]);
    // The input itself is kept (no rule for it): replay can re-evaluate it.
    expect(record.event).toEqual(emit("ring 555-0100"));
    await chainIsClean(p);
  });
});

describe("observations and live registry changes", () => {
  it("the agent redacts observations by the rules in force, picked up live from the registry", async () => {
    const p = await startPipeline(nats.url(), { registry: { policies }, policies: [dlp] });
    const ctx = { ...run, toolName: "read_file", toolCallId: "t-9" };
    const event = {
      toolName: "read_file",
      toolCallId: "t-9",
      params: { path: "/home/me/.aws/credentials" },
      result: "aws_secret_access_key=abc",
      durationMs: 3,
    };
    await p.client.observe("after_tool_call", ctx, event, { eventId: "before-rule" });
    const revision = await p.apply({
      policies,
      redact: [
        { hooks: ["after_tool_call", "llm_output"], pointer: "/event/result", action: "mask" },
      ],
    });
    await p.client.observe("after_tool_call", ctx, event, { eventId: "after-rule" });
    // A decision after the change is redacted by the new revision's rules and records it.
    const blocked = await p.client.call("before_response_emit", run, emit("hunter2"), {
      callId: "emit-live",
    });
    expect(blocked.decision.outcome).toBe("block");
    expect((await onlyRecord(p, "emit-live")).registryRevision).toBe(revision);

    const observations = new Map(
      (await p.readLog())
        .filter((r) => r.record.kind === "observation")
        .map((r) => [(r.record as { eventId: string }).eventId, r.record]),
    );
    expect((observations.get("before-rule") as { event: unknown }).event).toEqual(event);
    expect(observations.get("before-rule")!.redacted).toBeUndefined();
    expect((observations.get("after-rule") as { event: unknown }).event).toEqual({
      ...event,
      result: REDACTION_MASK,
    });
    expect(observations.get("after-rule")!.redacted).toEqual([
      { path: "/event/result", action: "mask" },
    ]);
    await chainIsClean(p);
  });
});

describe("hookbus registry apply refuses bad rules", () => {
  it("names each bad rule by path, exits 1 and stores nothing", async () => {
    const p = await startPipeline(nats.url(), { registry: { policies }, policies: [dlp] });
    const dir = await mkdtemp(join(tmpdir(), "hookbus-redact-"));
    const file = join(dir, "registry.json");
    await writeFile(
      file,
      JSON.stringify({
        policies,
        redact: [
          { pointer: "/event/content", action: "mask", when: "block" },
          { pointer: "/decision/outcome", action: "mask" },
          { pointer: "event/content", action: "hash" },
          { pointer: "/outcomes/*/verdict", action: "shred" },
          { pointer: "/event/x", action: "mask", hooks: ["before_emit"] },
        ],
      }),
    );
    const run = await hookbus(nats.url(), p.namespace, "registry", "apply", file);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^HOOKBUS_INVALID_REGISTRY: .*registry\.json is invalid:/);
    expect(run.stderr).toMatch(/redact\.1\.pointer: "\/decision\/outcome" cannot be redacted/);
    expect(run.stderr).toMatch(/redact\.2\.pointer: "event\/content" is not a JSON pointer/);
    expect(run.stderr).toMatch(/redact\.3\.action: .*\(invalid_value\)/);
    expect(run.stderr).toMatch(/redact\.4\.hooks\.0: unknown hook "before_emit"/);
    expect(run.stderr).not.toMatch(/redact\.0/);
    expect((await p.store.current()).revision).toBe(p.revision);

    // The valid part alone applies, and `registry show --json` shows the rules.
    await writeFile(
      file,
      JSON.stringify({ policies, redact: [{ pointer: "/event/content", action: "mask" }] }),
    );
    expect((await hookbus(nats.url(), p.namespace, "registry", "apply", file)).code).toBe(0);
    const shown = await hookbus(nats.url(), p.namespace, "registry", "show", "--json");
    expect(JSON.parse(shown.stdout)).toMatchObject({
      redact: [{ pointer: "/event/content", action: "mask", when: "always" }],
    });
  });
});
