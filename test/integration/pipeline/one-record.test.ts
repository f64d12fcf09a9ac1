/**
 * Every decision an agent got from a coordinator has exactly one record in the log, equal to what
 * the agent got; a retry of the same call id is stored once and answered identically.
 */
import { describe, expect, it } from "vitest";
import { definePolicy, type CallResult, type ModifyingHookName } from "../../../src/index.js";
import { kindToken, startPipeline, useNatsServer } from "./harness.js";

const nats = useNatsServer();

describe("exactly one record per decision", () => {
  it("records each of ~50 mixed calls over several sessions once, with the decision the agent received", async () => {
    const guard = definePolicy({
      name: "guard",
      hooks: {
        before_tool_call: (e) =>
          e.toolName === "danger" ? { block: true, blockReason: "no danger" } : undefined,
        before_tool_result: (e) =>
          e.isError ? { block: true, blockReason: "tool errors are not shown" } : undefined,
      },
    });
    const rewriter = definePolicy({
      name: "rewriter",
      hooks: {
        before_tool_call: (e) =>
          e.toolName === "shell" ? { params: { cmd: "echo safe" } } : undefined,
        before_tool_result: () => ({ content: "[checked]" }),
        before_llm_call: (e) => ({ systemPrompt: `turn ${e.iteration ?? 0}` }),
      },
    });
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          { name: "guard", hooks: ["before_tool_call", "before_tool_result"], priority: 100 },
          {
            name: "rewriter",
            hooks: ["before_tool_call", "before_tool_result", "before_llm_call"],
            priority: 10,
          },
        ],
      },
      policies: [guard, rewriter],
    });

    // Session keys with characters that must be encoded in the subject.
    const sessions = ["s-plain", "s.dotted", "s with spaces", "s*wild>", "s-ü-✓"];
    const tools = ["danger", "shell", "read_file"];
    type Planned = () => Promise<CallResult<ModifyingHookName>>;
    const planned: Planned[] = [];
    for (let i = 0; i < 52; i++) {
      const context = {
        agentId: i % 2 === 0 ? "agent-a" : "agent.b",
        sessionKey: sessions[i % sessions.length]!,
        runId: `run-${i % 7}`,
      };
      const toolName = tools[i % tools.length]!;
      switch (i % 4) {
        case 0:
        case 1:
          planned.push(() =>
            p.client.call("before_tool_call", context, {
              toolName,
              toolCallId: `tc-${i}`,
              params: { i },
            }),
          );
          break;
        case 2:
          planned.push(() =>
            p.client.call("before_tool_result", context, {
              toolName,
              params: { i },
              result: `result ${i}`,
              isError: i % 3 === 0,
            }),
          );
          break;
        default:
          planned.push(() =>
            i % 8 === 3
              ? // No policy on after_llm_call: answered on the fast path, never recorded.
                p.client.call("after_llm_call", context, { toolCalls: [] })
              : p.client.call("before_llm_call", context, {
                  messages: [{ role: "user", content: `hello ${i}` }],
                  iteration: i,
                }),
          );
      }
    }
    const results: CallResult<ModifyingHookName>[] = [];
    // In waves of 13 concurrent calls.
    for (let start = 0; start < planned.length; start += 13) {
      results.push(...(await Promise.all(planned.slice(start, start + 13).map((call) => call()))));
    }

    const fromCoordinator = results.filter((r) => r.source === "coordinator");
    const outcomes = new Set(fromCoordinator.map((r) => r.decision.outcome));
    expect(outcomes).toEqual(new Set(["allow", "modify", "block"]));
    expect(fromCoordinator.length).toBeGreaterThanOrEqual(45);
    const fastPath = results.filter((r) => r.source === "fast-path");
    expect(fastPath.length).toBe(results.length - fromCoordinator.length);
    expect(fastPath.length).toBeGreaterThan(0);

    const log = await p.readLog();
    const decisions = log.filter((r) => r.record.kind === "decision");
    // Nothing but decisions, and as many as the agent received from the coordinator.
    expect(log.length).toBe(decisions.length);
    expect(decisions.length).toBe(fromCoordinator.length);
    for (const result of fromCoordinator) {
      const matching = decisions.filter(
        (r) => r.record.kind === "decision" && r.record.callId === result.callId,
      );
      expect(matching, `records of ${result.callId}`).toHaveLength(1);
      const stored = matching[0]!;
      if (stored.record.kind !== "decision") throw new Error("not a decision");
      expect(stored.seq).toBe(result.recordSeq);
      expect(stored.record.decision).toEqual(result.decision);
      expect(stored.record.registryRevision).toBe(result.registryRevision);
      expect(kindToken(stored.subject)).toBe(result.decision.outcome);
      // The subject's encoded agent and session decode to the record's context.
      const parsed = p.subjects.parseAudit(stored.subject);
      expect(parsed.agentId).toBe(stored.record.context.agentId);
      expect(parsed.sessionKey).toBe(stored.record.context.sessionKey);
      expect(parsed.hook).toBe(stored.record.hook);
    }
    expect(new Set(decisions.map((r) => r.record.context.sessionKey))).toEqual(new Set(sessions));
  });

  it("stores an agent's retry of the same callId once and answers both tries identically", async () => {
    // Decides differently every time it is asked: only the log can make two answers equal.
    let asked = 0;
    const flipper = definePolicy({
      name: "flipper",
      hooks: {
        before_tool_call: () => {
          asked++;
          return asked % 2 === 1
            ? { params: { try: asked } }
            : { block: true, blockReason: `try ${asked}` };
        },
      },
    });
    const p = await startPipeline(nats.url(), {
      registry: { policies: [{ name: "flipper", hooks: ["before_tool_call"], priority: 1 }] },
      policies: [flipper],
    });
    const context = { agentId: "agent-retry", sessionKey: "s-retry", runId: "run-1" };
    const event = { toolName: "shell", toolCallId: "tc-1", params: { cmd: "ls" } };

    const first = await p.client.call("before_tool_call", context, event, { callId: "retry-1" });
    const second = await p.client.call("before_tool_call", context, event, { callId: "retry-1" });
    expect(first.source).toBe("coordinator");
    expect(second).toEqual(first);
    expect(first.decision).toEqual({
      outcome: "modify",
      params: { try: 1 },
      decidedBy: { params: ["flipper"] },
    });

    // Two tries in flight at once.
    const [a, b] = await Promise.all([
      p.client.call("before_tool_call", context, event, { callId: "retry-2" }),
      p.client.call("before_tool_call", context, event, { callId: "retry-2" }),
    ]);
    expect(b).toEqual(a);

    const log = await p.readLog();
    for (const [callId, result] of [
      ["retry-1", first],
      ["retry-2", a],
    ] as const) {
      const records = log.filter((r) => r.record.kind === "decision" && r.record.callId === callId);
      expect(records, callId).toHaveLength(1);
      const record = records[0]!.record;
      if (record.kind !== "decision") throw new Error("not a decision");
      expect(record.decision).toEqual(result.decision);
      expect(records[0]!.seq).toBe(result.recordSeq);
    }
    expect(log).toHaveLength(2);
  });
});
