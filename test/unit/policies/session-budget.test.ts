import { describe, expect, it } from "vitest";
import {
  createSessionState,
  invokePolicy,
  isHookbusError,
  MemorySessionStateStore,
  type SessionStateStore,
  type StateAddress,
} from "../../../src/index.js";
import {
  BUDGET_STATE_KEY,
  sessionBudget,
  type BudgetUsage,
} from "../../../services/policies/index.js";
import { verdictOf } from "./helpers.js";

const call = (toolName: string, toolCallId?: string) => ({
  toolName,
  ...(toolCallId === undefined ? {} : { toolCallId }),
  params: {},
});

describe("session-budget", () => {
  const policy = sessionBudget({ limits: { web_search: 2, "mcp__github__*": 3 } });

  it("allows N calls of a tool per session, then blocks with a reason naming the tool and limit", async () => {
    const state = new MemorySessionStateStore();
    expect(
      await verdictOf(policy, "before_tool_call", call("web_search"), { state }),
    ).toBeUndefined();
    expect(
      await verdictOf(policy, "before_tool_call", call("web_search"), { state }),
    ).toBeUndefined();
    expect(await verdictOf(policy, "before_tool_call", call("web_search"), { state })).toEqual({
      block: true,
      blockReason:
        'tool "web_search" has used all 2 calls allowed per session by policy "session-budget"',
    });
    // Still blocked, and refused calls draw nothing.
    expect(
      (await verdictOf(policy, "before_tool_call", call("web_search"), { state }))?.block,
    ).toBe(true);
    const usage = await createSessionState(state, "session-budget", "s-1").get<BudgetUsage>(
      BUDGET_STATE_KEY,
    );
    expect(usage?.counts).toEqual({ web_search: 2 });
  });

  it("counts each session separately", async () => {
    const state = new MemorySessionStateStore();
    for (let i = 0; i < 2; i++)
      await verdictOf(policy, "before_tool_call", call("web_search"), { state, sessionKey: "a" });
    expect(
      (await verdictOf(policy, "before_tool_call", call("web_search"), { state, sessionKey: "a" }))
        ?.block,
    ).toBe(true);
    expect(
      await verdictOf(policy, "before_tool_call", call("web_search"), { state, sessionKey: "b" }),
    ).toBeUndefined();
  });

  it("shares a glob budget between the tools it matches, and names it", async () => {
    const state = new MemorySessionStateStore();
    for (const tool of ["mcp__github__list", "mcp__github__get", "mcp__github__list"])
      expect(await verdictOf(policy, "before_tool_call", call(tool), { state })).toBeUndefined();
    expect(
      await verdictOf(policy, "before_tool_call", call("mcp__github__get"), { state }),
    ).toEqual({
      block: true,
      blockReason:
        'tool "mcp__github__get" (budget "mcp__github__*") has used all 3 calls allowed per session by policy "session-budget"',
    });
  });

  it("ignores tools no budget names (no state touched)", async () => {
    const state = new MemorySessionStateStore();
    for (let i = 0; i < 5; i++)
      expect(
        await verdictOf(policy, "before_tool_call", call("read_file"), { state }),
      ).toBeUndefined();
    expect(
      await createSessionState(state, "session-budget", "s-1").get(BUDGET_STATE_KEY),
    ).toBeUndefined();
  });

  it("a call must fit every budget that matches; a refusal by one draws from none", async () => {
    const p = sessionBudget({ limits: { send_email: 5, "*": 3 } });
    const state = new MemorySessionStateStore();
    for (const tool of ["read_file", "send_email", "read_file"])
      expect(await verdictOf(p, "before_tool_call", call(tool), { state })).toBeUndefined();
    const blocked = await verdictOf(p, "before_tool_call", call("send_email"), { state });
    expect(blocked?.blockReason).toMatch(/budget "\*"\) has used all 3 calls/);
    const usage = await createSessionState(state, "session-budget", "s-1").get<BudgetUsage>(
      BUDGET_STATE_KEY,
    );
    expect(usage?.counts).toEqual({ "*": 3, send_email: 1 });
  });

  it("a limit of 0 forbids the tool", async () => {
    const p = sessionBudget({ limits: { exec: 0 } });
    expect((await verdictOf(p, "before_tool_call", call("exec")))?.block).toBe(true);
  });

  it("allows exactly N of many concurrent calls (atomic update)", async () => {
    const p = sessionBudget({ limits: { web_search: 7 } });
    const state = new MemorySessionStateStore();
    const verdicts = await Promise.all(
      Array.from({ length: 30 }, () =>
        verdictOf(p, "before_tool_call", call("web_search"), { state }),
      ),
    );
    expect(verdicts.filter((v) => v === undefined)).toHaveLength(7);
    expect(verdicts.filter((v) => v?.block === true)).toHaveLength(23);
  });

  it("with rememberCallIds, a retried call id is allowed again without drawing; by default it counts", async () => {
    const remembering = sessionBudget({ limits: { web_search: 1 }, rememberCallIds: 8 });
    let state = new MemorySessionStateStore();
    expect(
      await verdictOf(remembering, "before_tool_call", call("web_search", "tc-1"), { state }),
    ).toBeUndefined();
    expect(
      await verdictOf(remembering, "before_tool_call", call("web_search", "tc-1"), { state }),
    ).toBeUndefined();
    expect(
      (await verdictOf(remembering, "before_tool_call", call("web_search", "tc-2"), { state }))
        ?.block,
    ).toBe(true);

    const strict = sessionBudget({ limits: { web_search: 1 } });
    state = new MemorySessionStateStore();
    expect(
      await verdictOf(strict, "before_tool_call", call("web_search", "tc-1"), { state }),
    ).toBeUndefined();
    expect(
      (await verdictOf(strict, "before_tool_call", call("web_search", "tc-1"), { state }))?.block,
    ).toBe(true);
  });

  it("takes its decision from the value its own update wrote, even when fn ran more than once", async () => {
    // A store that makes every update lose one race first (fn runs twice, like a KV CAS retry),
    // and the lost attempt saw a stale, empty budget: deciding from it would allow the call.
    const inner = new MemorySessionStateStore();
    let extraRuns = 0;
    const racy: SessionStateStore = {
      get: (a) => inner.get(a),
      set: (a, v) => inner.set(a, v),
      delete: (a) => inner.delete(a),
      update: async (address: StateAddress, fn) => {
        fn(undefined); // the lost attempt, on a stale read
        extraRuns++;
        return inner.update(address, fn);
      },
    };
    const p = sessionBudget({ limits: { web_search: 1 } });
    expect(
      await verdictOf(p, "before_tool_call", call("web_search"), { state: racy }),
    ).toBeUndefined();
    expect(
      (await verdictOf(p, "before_tool_call", call("web_search"), { state: racy }))?.block,
    ).toBe(true);
    expect(extraRuns).toBe(2);
  });

  it("fails (so its failure mode decides) when the state store fails", async () => {
    const broken: SessionStateStore = {
      get: () => Promise.reject(new Error("kv down")),
      set: () => Promise.reject(new Error("kv down")),
      delete: () => Promise.reject(new Error("kv down")),
      update: () => Promise.reject(new Error("kv down")),
    };
    const result = await invokePolicy(
      sessionBudget({ limits: { web_search: 1 } }),
      "before_tool_call",
      call("web_search"),
      { agentId: "a", sessionKey: "s", runId: "r" },
      { callId: "c", state: broken },
    );
    expect(result.status).toBe("error");
    expect(result.error?.code).toBe("HOOKBUS_POLICY_ERROR");
  });

  it.each([
    [undefined, /limits must map/],
    [{ limits: {} }, /limits must map/],
    [{ limits: { x: -1 } }, /whole number/],
    [{ limits: { x: 1.5 } }, /whole number/],
    [{ limits: { x: 1 }, rememberCallIds: -2 }, /rememberCallIds/],
  ])("rejects configuration %j", (options, message) => {
    let error: unknown;
    try {
      sessionBudget(options as never);
    } catch (e) {
      error = e;
    }
    expect(isHookbusError(error, "HOOKBUS_INVALID_POLICY")).toBe(true);
    expect((error as Error).message).toMatch(message);
  });
});
