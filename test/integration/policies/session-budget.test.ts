/**
 * The session budget holds when it runs as several workers (separate connections, shared KV
 * state, concurrent calls through a real coordinator) and across a worker restart.
 */
import { describe, expect, it } from "vitest";
import {
  createSessionState,
  isHookbusBlockedError,
  KvSessionStateStore,
} from "../../../src/index.js";
import {
  BUDGET_STATE_KEY,
  sessionBudget,
  type BudgetUsage,
} from "../../../services/policies/index.js";
import { counted, startPipeline, startWorker, useNatsServer, useWorkers } from "./harness.js";

const nats = useNatsServer();
useWorkers();

const LIMIT = 5;
const registry = {
  policies: [
    {
      name: "session-budget",
      hooks: ["before_tool_call"],
      priority: 80,
      timeoutMs: 5000,
      failMode: "fail-closed" as const,
    },
  ],
};

const ctx = (sessionKey: string, toolCallId: string) => ({
  agentId: "budget-agent",
  sessionKey,
  runId: "run-1",
  toolCallId,
});
const search = (toolCallId: string) => ({
  toolName: "web_search",
  toolCallId,
  params: { q: "nats" },
});

describe("session-budget over NATS", () => {
  it("allows exactly N of many concurrent calls when three workers on separate connections share the KV state", async () => {
    const p = await startPipeline(nats.url(), { registry });
    const counters = [{ n: 0 }, { n: 0 }, { n: 0 }];
    for (const counter of counters) {
      await startWorker(
        nats.url(),
        p.namespace,
        counted(sessionBudget({ limits: { web_search: LIMIT } }), counter),
      );
    }

    const total = 30;
    const decisions = await Promise.all(
      Array.from({ length: total }, (_, i) =>
        p.client.decide("before_tool_call", ctx("busy", `tc-${i}`), search(`tc-${i}`)),
      ),
    );
    const allowed = decisions.filter((d) => d.outcome === "allow");
    const blocked = decisions.filter((d) => d.outcome === "block");
    expect(allowed).toHaveLength(LIMIT);
    expect(blocked).toHaveLength(total - LIMIT);
    for (const d of blocked) {
      expect(d.blockedBy).toBe("session-budget");
      expect(d.blockReason).toBe(
        `tool "web_search" has used all ${LIMIT} calls allowed per session by policy "session-budget"`,
      );
    }
    // The work really was spread over the workers (queue group), and each call was asked once.
    expect(counters.reduce((sum, c) => sum + c.n, 0)).toBe(total);
    expect(counters.filter((c) => c.n > 0).length).toBeGreaterThanOrEqual(2);
    // The stored count is the limit: refused calls drew nothing.
    const store = new KvSessionStateStore(p.connections.reader, { namespace: p.namespace });
    const usage = await createSessionState(store, "session-budget", "busy").get<BudgetUsage>(
      BUDGET_STATE_KEY,
    );
    expect(usage?.counts).toEqual({ web_search: LIMIT });
    // Another session has its own budget.
    expect((await p.client.decide("before_tool_call", ctx("calm", "x"), search("x"))).outcome).toBe(
      "allow",
    );
  });

  it("continues the count after the worker is stopped and a new one started", async () => {
    const p = await startPipeline(nats.url(), { registry });
    const ask = (i: number) =>
      p.client.decide("before_tool_call", ctx("restart", `tc-${i}`), search(`tc-${i}`));

    const first = await startWorker(
      nats.url(),
      p.namespace,
      sessionBudget({ limits: { web_search: LIMIT } }),
    );
    for (let i = 0; i < 3; i++) expect((await ask(i)).outcome).toBe("allow");
    await first.stop();

    // No worker: the budget does not silently disappear (fail-closed), and nothing is counted.
    const gap = await ask(100);
    expect(gap.outcome).toBe("block");
    expect(gap.blockReason).toMatch(/policy "session-budget" failed closed \(unavailable\)/);

    await startWorker(nats.url(), p.namespace, sessionBudget({ limits: { web_search: LIMIT } }));
    expect((await ask(3)).outcome).toBe("allow");
    expect((await ask(4)).outcome).toBe("allow");
    const sixth = await ask(5);
    expect(sixth.outcome).toBe("block");
    expect(sixth.blockReason).toMatch(/has used all 5 calls/);

    // Through the typed SDK method, the agent sees a HookbusBlockedError.
    let error: unknown;
    try {
      await p.client.beforeToolCall(ctx("restart", "tc-6"), search("tc-6"));
    } catch (e) {
      error = e;
    }
    expect(isHookbusBlockedError(error)).toBe(true);
    expect((error as { blockedBy?: string }).blockedBy).toBe("session-budget");
  });
});
