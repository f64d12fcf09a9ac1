/**
 * The after_llm_call gate's rules (DESIGN §2), with decision promises the test controls: the gate
 * is a class with no I/O, so these are its real inputs, not a stand-in for another component.
 */
import { describe, expect, it } from "vitest";
import type { Decision } from "../../../src/catalog/catalog.js";
import { AfterLlmCallGate, type GateVerdict } from "../../../src/agent/gate.js";
import { HookbusError } from "../../../src/foundation/errors.js";

type D = Decision<"after_llm_call">;
const run = { agentId: "agent-1", sessionKey: "s-1", runId: "run-1" };

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const allow: D = { outcome: "allow", decidedBy: {} };
function allowlist(ids: (string | undefined)[], by: string[] = ["tool-guard"]): D {
  return {
    outcome: "modify",
    decidedBy: { toolCalls: by },
    toolCalls: ids.map((id) => (id === undefined ? { name: "x" } : { id, name: "x" })),
  };
}

async function verdict(
  gate: AfterLlmCallGate,
  ...ids: (string | undefined)[]
): Promise<GateVerdict> {
  return gate.check(run, ...ids);
}

describe("AfterLlmCallGate", () => {
  it("without a gate, a tool call proceeds synchronously (no promise, no await)", () => {
    const gate = new AfterLlmCallGate();
    expect(gate.check(run, "call_1")).toEqual({ proceed: true });
  });

  it("an allow decision without toolCalls lets every call through, with or without an id", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(run, Promise.resolve(allow));
    expect(await verdict(gate, "call_1")).toEqual({ proceed: true });
    expect(await verdict(gate, undefined)).toEqual({ proceed: true });
  });

  it("an allowlist lets its ids through and blocks the others, naming after_llm_call and the narrowing policy", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(run, Promise.resolve(allowlist(["call_1"])));
    expect(await verdict(gate, "call_1")).toEqual({ proceed: true });
    const denied = await verdict(gate, "call_2");
    expect(denied).toEqual({
      proceed: false,
      blockReason: 'tool call "call_2" is not in the after_llm_call allowlist',
      blockedBy: "tool-guard",
    });
  });

  it("a tool call without an id is blocked while an allowlist is active (also an empty id)", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(run, Promise.resolve(allowlist(["call_1"])));
    for (const ids of [[], [undefined], [""], [undefined, ""]]) {
      const v = await verdict(gate, ...ids);
      expect(v.proceed).toBe(false);
      expect(!v.proceed && v.blockReason).toMatch(/without an id.*after_llm_call allowlist/);
    }
  });

  it("allowlist entries without an id allow nothing; an empty allowlist blocks every call", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(run, Promise.resolve(allowlist([undefined])));
    expect((await verdict(gate, "call_1")).proceed).toBe(false);
    gate.open(run, Promise.resolve(allowlist([])));
    expect((await verdict(gate, "call_1")).proceed).toBe(false);
  });

  it("with both an event id and a context id, each must be allowed", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(run, Promise.resolve(allowlist(["call_1"])));
    expect((await verdict(gate, "call_1", "call_1")).proceed).toBe(true);
    expect((await verdict(gate, "call_1", undefined)).proceed).toBe(true);
    expect((await verdict(gate, "call_1", "call_9")).proceed).toBe(false);
    expect((await verdict(gate, "call_9", "call_1")).proceed).toBe(false);
  });

  it("names no policy when several narrowed the allowlist (which one removed the id is unknown)", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(run, Promise.resolve(allowlist(["call_1"], ["a", "b"])));
    const v = await verdict(gate, "call_2");
    expect(v.proceed).toBe(false);
    expect("blockedBy" in v).toBe(false);
  });

  it("a blocked after_llm_call blocks every tool call of the turn with its reason and blocker", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(
      run,
      Promise.resolve<D>({
        outcome: "block",
        blockReason: "tainted session",
        blockedBy: "taint",
        decidedBy: { block: ["taint"] },
      }),
    );
    for (const id of ["call_1", undefined]) {
      expect(await verdict(gate, id)).toEqual({
        proceed: false,
        blockReason: "after_llm_call blocked this turn's tool calls: tainted session",
        blockedBy: "taint",
      });
    }
  });

  it("a failed after_llm_call (timeout, no coordinator) blocks: tool gates fail closed", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(
      run,
      Promise.reject(new HookbusError("HOOKBUS_CALL_TIMEOUT", "no decision before the deadline")),
    );
    const v = await verdict(gate, "call_1");
    expect(v.proceed).toBe(false);
    expect(!v.proceed && v.blockReason).toMatch(
      /after_llm_call did not decide \(HOOKBUS_CALL_TIMEOUT/,
    );
  });

  it("a rejected decision that is never checked is not an unhandled rejection", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(run, Promise.reject(new Error("boom")));
    gate.clear(run);
    // vitest fails the run on an unhandled rejection; give it a turn to surface.
    await new Promise((r) => setTimeout(r, 10));
  });

  it("a tool call started before the decision waits for it (the deterministic gate of the seeds)", async () => {
    const gate = new AfterLlmCallGate();
    const decision = deferred<D>();
    gate.open(run, decision.promise);
    let settled: GateVerdict | undefined;
    const pending = Promise.resolve(gate.check(run, "call_2")).then((v) => (settled = v));
    // "Nothing happens within 20 ms" (a legit sleep): the check waits for the decision.
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBeUndefined();
    decision.resolve(allowlist(["call_1"]));
    await pending;
    expect(settled?.proceed).toBe(false);
  });

  it("clear() lets the next turn proceed, while a check already waiting keeps its turn's decision", async () => {
    const gate = new AfterLlmCallGate();
    const decision = deferred<D>();
    gate.open(run, decision.promise);
    const waiting = gate.check(run, "call_2");
    gate.clear(run);
    expect(gate.has(run)).toBe(false);
    expect(gate.check(run, "call_2")).toEqual({ proceed: true });
    decision.resolve(allowlist(["call_1"]));
    expect((await waiting).proceed).toBe(false);
    expect(gate.size).toBe(0);
  });

  it("a second after_llm_call in the same turn replaces the first", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(run, Promise.resolve(allowlist(["call_1"])));
    gate.open(run, Promise.resolve(allowlist(["call_2"])));
    expect((await verdict(gate, "call_1")).proceed).toBe(false);
    expect((await verdict(gate, "call_2")).proceed).toBe(true);
    expect(gate.size).toBe(1);
  });

  it("gates of different runs, and of different agents with the same run id, never interfere", async () => {
    const gate = new AfterLlmCallGate();
    const other = { agentId: "agent-1", sessionKey: "s-1", runId: "run-2" };
    const otherAgent = { agentId: "agent-2", sessionKey: "s-1", runId: "run-1" };
    gate.open(run, Promise.resolve(allowlist(["call_1"])));
    gate.open(otherAgent, Promise.resolve({ ...allow, outcome: "block" as const, decidedBy: {} }));
    expect(gate.check(other, "call_9")).toEqual({ proceed: true });
    expect((await gate.check(run, "call_1")).proceed).toBe(true);
    expect((await gate.check(otherAgent, "call_1")).proceed).toBe(false);
    gate.clear(other);
    expect(gate.size).toBe(2);
  });

  it("endRun(runId) clears the run for every agent; endRun(runId, agentId) for one", () => {
    const gate = new AfterLlmCallGate();
    const a2 = { agentId: "agent-2", sessionKey: "s-1", runId: "run-1" };
    gate.open(run, Promise.resolve(allow));
    gate.open(a2, Promise.resolve(allow));
    gate.endRun("run-1", "agent-2");
    expect(gate.has(a2)).toBe(false);
    expect(gate.has(run)).toBe(true);
    gate.open(a2, Promise.resolve(allow));
    gate.endRun("run-1");
    expect(gate.size).toBe(0);
  });
});

describe("gate memory", () => {
  const pending = () => new Promise<never>(() => {});

  it("holds at most maxRuns gates: a run that never ends is forgotten, oldest first", () => {
    const gate = new AfterLlmCallGate({ maxRuns: 3 });
    for (let i = 0; i < 10; i++)
      gate.open({ agentId: "a", sessionKey: "s-1", runId: `r${i}` }, pending());
    expect(gate.size).toBe(3);
    expect(gate.has({ agentId: "a", sessionKey: "s-1", runId: "r6" })).toBe(false);
    expect(gate.has({ agentId: "a", sessionKey: "s-1", runId: "r9" })).toBe(true);
  });

  it("forgets a gate after its TTL, so the run's later tool calls go on to the policies", () => {
    const gate = new AfterLlmCallGate({ ttlMs: -1 });
    gate.open(run, pending());
    expect(gate.check(run, "tc-1")).toEqual({ proceed: true });
    expect(gate.size).toBe(0);
  });

  it("endRun without an agent forgets every agent's gate of the run", () => {
    const gate = new AfterLlmCallGate();
    gate.open({ agentId: "a", sessionKey: "s-1", runId: "r" }, pending());
    gate.open({ agentId: "b", sessionKey: "s-1", runId: "r" }, pending());
    gate.open({ agentId: "a", sessionKey: "s-1", runId: "other" }, pending());
    gate.endRun("r");
    expect(gate.size).toBe(1);
    gate.open({ agentId: "c", sessionKey: "s-1", runId: "r" }, pending());
    expect(gate.size).toBe(2);
  });
});

describe("gates per agent, session and run (issue 13)", () => {
  const a = { agentId: "agent-1", sessionKey: "conv-a", runId: "run-7" };
  const b = { agentId: "agent-1", sessionKey: "conv-b", runId: "run-7" };
  const block: D = { outcome: "block", blockReason: "no tools", decidedBy: { block: ["p"] } };

  it("one session's block never blocks another session's tools under the same run id", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(a, Promise.resolve(block));
    expect(gate.check(b, "call_1")).toEqual({ proceed: true });
    expect((await gate.check(a, "call_1")).proceed).toBe(false);
  });

  it("another session's before_llm_call (clear) never clears a session's block", async () => {
    const gate = new AfterLlmCallGate();
    gate.open(a, Promise.resolve(block));
    gate.clear(b);
    expect((await gate.check(a, "call_1")).proceed).toBe(false);
    expect(gate.size).toBe(1);
  });

  it("a context without a run id has one gate per agent and session", async () => {
    const gate = new AfterLlmCallGate();
    const noRunA = { agentId: "agent-1", sessionKey: "conv-a" };
    gate.open(noRunA, Promise.resolve(block));
    expect(gate.check({ agentId: "agent-1", sessionKey: "conv-b" }, "c")).toEqual({
      proceed: true,
    });
    expect((await gate.check(noRunA, "c")).proceed).toBe(false);
    gate.clear(noRunA);
    expect(gate.size).toBe(0);
  });

  it("endRun(runId, agentId, sessionKey) forgets one session; endRun(runId, agentId) all of the agent's", () => {
    const gate = new AfterLlmCallGate();
    const other = { agentId: "agent-2", sessionKey: "conv-a", runId: "run-7" };
    gate.open(a, Promise.resolve(block));
    gate.open(b, Promise.resolve(block));
    gate.open(other, Promise.resolve(block));
    gate.endRun("run-7", "agent-1", "conv-a");
    expect([gate.has(a), gate.has(b), gate.has(other)]).toEqual([false, true, true]);
    gate.open(a, Promise.resolve(block));
    gate.endRun("run-7", "agent-1");
    expect([gate.has(a), gate.has(b), gate.has(other)]).toEqual([false, false, true]);
  });
});
