/** The candidate set: registry entries matched to loaded policy modules by name. */
import { describe, expect, it } from "vitest";
import { definePolicy, HookbusError } from "../../../src/index.js";
import { replay, Replayer } from "../../../src/replay/replay.js";

const gate = definePolicy({
  name: "gate",
  version: "1",
  hooks: {
    before_tool_call: (e) =>
      e.toolName === "exec" ? { block: true, blockReason: "no" } : undefined,
  },
});
const extra = definePolicy({ name: "extra", hooks: { before_llm_call: () => undefined } });

const record = (toolName: string, outcome = "allow") => ({
  v: 1 as const,
  kind: "decision" as const,
  callId: `call-${toolName}`,
  hook: "before_tool_call",
  context: { agentId: "a", sessionKey: "s", runId: "r" },
  event: { toolName, params: {} },
  outcomes: [],
  decision: { outcome, decidedBy: {} },
  registryRevision: 1,
  receivedAt: "2025-01-01T00:00:00.000Z",
  decidedAt: "2025-01-01T00:00:00.001Z",
});

function caught(fn: () => unknown): HookbusError {
  try {
    fn();
  } catch (error) {
    if (error instanceof HookbusError) return error;
    throw error;
  }
  throw new Error("expected a HookbusError");
}

describe("the candidate policy set", () => {
  it("refuses a registry policy that no loaded module defines, naming it and what was loaded", () => {
    const error = caught(
      () =>
        new Replayer({
          policies: [gate],
          registry: {
            policies: [
              { name: "gate", hooks: ["before_tool_call"], priority: 1 },
              { name: "no-shell", hooks: ["before_tool_call"], priority: 2 },
            ],
          },
        }),
    );
    expect(error.code).toBe("HOOKBUS_INVALID_POLICY");
    expect(error.message).toContain('"no-shell"');
    expect(error.message).toContain('loaded: "gate"');
    expect(error.details).toMatchObject({ policy: "no-shell", missing: ["no-shell"] });
  });

  it("fails the replay() iterable at its first step for the same mistake", async () => {
    const run = replay({
      records: [record("exec")],
      policies: [],
      registry: { policies: [{ name: "gate", hooks: ["before_tool_call"], priority: 1 }] },
    });
    await expect(run.next()).rejects.toMatchObject({ code: "HOOKBUS_INVALID_POLICY" });
  });

  it("reports an invalid registry with the registry's own code", () => {
    expect(
      caught(() => new Replayer({ policies: [gate], registry: { policies: [{}] } })).code,
    ).toBe("HOOKBUS_INVALID_REGISTRY");
  });

  it("lists loaded policies that the registry does not name as unused, and never asks them", async () => {
    const replayer = new Replayer({
      policies: [gate, extra],
      registry: { policies: [{ name: "gate", hooks: ["before_tool_call"], priority: 1 }] },
    });
    expect(replayer.unused).toEqual(["extra"]);
    const results = [];
    for await (const r of replayer.run([record("exec")])) results.push(r);
    expect(results[0]?.outcomes.map((o) => o.policy)).toEqual(["gate"]);
  });

  it("refuses two different policies with one name", () => {
    const twin = definePolicy({ name: "gate", hooks: { before_tool_call: () => undefined } });
    expect(
      caught(
        () =>
          new Replayer({
            policies: [gate, twin],
            registry: { policies: [{ name: "gate", hooks: ["before_tool_call"], priority: 1 }] },
          }),
      ).code,
    ).toBe("HOOKBUS_INVALID_POLICY");
  });

  it("warns about a hook the registry lists but the module does not handle, and fails it there as live", async () => {
    const replayer = new Replayer({
      policies: [gate],
      registry: {
        policies: [
          { name: "gate", hooks: ["before_tool_call", "before_response_emit"], priority: 1 },
        ],
      },
    });
    expect(replayer.candidates.warnings).toEqual([
      expect.stringContaining('policy "gate" is registered for before_response_emit'),
    ]);
    const emit = {
      ...record("x"),
      callId: "emit",
      hook: "before_response_emit",
      event: { content: "hi", allContent: ["hi"] },
    };
    const results = [];
    for await (const r of replayer.run([emit])) results.push(r);
    // before_response_emit fails closed by default: the missing handler blocks, as it would live.
    expect(results[0]).toMatchObject({
      status: "changed",
      replayed: { outcome: "block", blockedBy: "gate" },
      outcomes: [{ policy: "gate", status: "error", effect: "failed-closed" }],
    });
  });

  it("applies the registry's priority, failure mode and shadow mode, and ignores timeouts", async () => {
    const slow = definePolicy({
      name: "slow",
      hooks: {
        before_tool_call: async () => {
          await new Promise((r) => setTimeout(r, 30));
          return { block: true, blockReason: "slow says no" };
        },
      },
    });
    const results = [];
    for await (const r of replay({
      records: [record("read")],
      policies: [gate, slow],
      registry: {
        policies: [
          { name: "gate", hooks: ["before_tool_call"], priority: 1 },
          { name: "slow", hooks: ["before_tool_call"], priority: 5, timeoutMs: 1, mode: "shadow" },
        ],
      },
    }))
      results.push(r);
    expect(results[0]).toMatchObject({
      status: "unchanged",
      replayed: { outcome: "allow" },
      shadow: { changed: true, decision: { outcome: "block", blockedBy: "slow" } },
      outcomes: [
        { policy: "slow", priority: 5, mode: "shadow", status: "ok" },
        { policy: "gate", priority: 1, mode: "enforce", status: "ok", effect: "no-opinion" },
      ],
    });
  });

  it("skips error and late-verdict records, and yields nothing for observations", async () => {
    const replayer = new Replayer({
      policies: [gate],
      registry: { policies: [{ name: "gate", hooks: ["before_tool_call"], priority: 1 }] },
    });
    const results = [];
    for await (const r of replayer.run([
      {
        v: 1,
        kind: "error",
        callId: "e",
        hook: "bogus",
        context: {},
        error: { code: "HOOKBUS_UNKNOWN_HOOK", message: "x" },
        registryRevision: 1,
        receivedAt: "2025-01-01T00:00:00.000Z",
      },
      {
        v: 1,
        kind: "observation",
        eventId: "o",
        hook: "session_end",
        context: { agentId: "a", sessionKey: "s" },
        event: {},
        publishedAt: "2025-01-01T00:00:00.000Z",
      },
      { record: record("exec", "block"), seq: 7 },
    ]))
      results.push(r);
    expect(results.map((r) => [r.seq, r.callId])).toEqual([[7, "call-exec"]]);
    expect(replayer.stats).toEqual({
      decisions: 1,
      observations: 0,
      observationErrors: 0,
      skipped: { error: 1, late: 0, approval: 0, erasure: 0, erased: 0 },
    });
  });
});
