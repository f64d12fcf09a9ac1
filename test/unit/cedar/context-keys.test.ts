import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  emptySessionFacts,
  evaluateCedar,
  parseCedarPolicySet,
  type SessionFacts,
} from "../../../src/cedar/index.js";
import { pruneContext, topLevelKeys } from "../../../src/cedar/context-keys.js";
import { TAINT_LABELS } from "../../../src/cedar/session-facts.js";

const keys = (text: string) => parseCedarPolicySet(text).contextKeys;
const top = (text: string) => topLevelKeys(keys(text));
const pruned = (text: string, context: Record<string, unknown>) =>
  pruneContext(context, keys(text));

describe("the context attributes a Cedar set reads", () => {
  it("collects attributes read by `.`, `[]` and `has`, however deep the expression", () => {
    expect(
      top(`forbid (principal, action, resource) when { context has call && context.call has url &&
        (context.session.taint.contains("x") || context["content"] like "*a*") };
        forbid (principal, action, resource is Tool) when { resource.class == "shell" };`),
    ).toEqual(new Set(["call", "session", "content"]));
    expect(top(`forbid (principal, action, resource) when { context has session.taint };`)).toEqual(
      new Set(["session"]),
    );
  });

  it("keeps the whole context when a policy uses it as a value", () => {
    expect(keys(`forbid (principal, action, resource) when { context == {} };`)).toBe("all");
    expect(
      keys(`forbid (principal, action, resource) when { [context].contains({"a": 1}) };`),
    ).toBe("all");
  });

  it("sends no context to a set that reads none", () => {
    expect(top(`forbid (principal, action, resource == Tool::"exec");`)).toEqual(new Set());
  });
});

describe("pruning by nested path", () => {
  const session = { toolCalls: 3, toolsCalled: ["a", "b"], taint: ["web-fetch"] };

  it("keeps only the nested attributes read, so a growing list leaves the request alone", () => {
    const text = `forbid (principal, action, resource) when { context.session.taint.contains("mcp") };`;
    expect(pruned(text, { session, agentId: "a" })).toEqual({
      session: { taint: ["web-fetch"] },
    });
  });

  it("keeps a record read whole, and a presence test keeps only presence", () => {
    expect(
      pruned(`forbid (principal, action, resource) when { context.session == {} };`, { session }),
    ).toEqual({ session });
    expect(
      pruned(`forbid (principal, action, resource) when { context has session };`, { session }),
    ).toEqual({ session: {} });
    expect(
      pruned(`forbid (principal, action, resource) when { context has session.taint };`, {
        session,
      }),
    ).toEqual({ session: { taint: ["web-fetch"] } });
  });

  it("keeps entity and extension values whole: Cedar reads them as values", () => {
    const owner = { __entity: { type: "User", id: "u" } };
    const text = `forbid (principal, action, resource) when { context.call.owner.name == "x" };`;
    expect(pruned(text, { call: { owner, other: 1 } })).toEqual({ call: { owner } });
  });

  it("walks a path read through an expression that is not a plain chain", () => {
    const text = `forbid (principal, action, resource) when {
      (if context has a then context.a else context.b).c == 1 };`;
    expect(pruned(text, { a: { c: 1, d: 2 }, b: { c: 2 }, e: 3 })).toEqual({
      a: { c: 1, d: 2 },
      b: { c: 2 },
    });
  });

  // Pruning is only sound if no answer changes: every verdict with the pruned context equals the
  // verdict the engine gives with the whole one, for policies that read nested paths.
  it("never changes an answer (property)", () => {
    const policies = `
      @id("taint") forbid (principal, action == Action::"before_tool_call", resource is Tool)
      when { context.session.taint.contains("web-fetch") && resource.class == "shell" };
      @id("count") forbid (principal, action == Action::"before_tool_call", resource is Tool)
      when { context.session.classCounts.shell > 2 && context.call has command &&
             context.call.command like "*curl*" };
      @id("has") forbid (principal, action == Action::"before_tool_call", resource is Tool)
      when { context has call && context.call has url && context.call.url.host == "evil.example" };`;
    const set = parseCedarPolicySet(policies, "nested.cedar");
    const whole = { ...set, contextKeys: "all" as const };
    const sessions = fc.record({
      shell: fc.nat({ max: 5 }),
      taint: fc.subarray([...TAINT_LABELS]),
      tools: fc.array(fc.constantFrom("Bash", "WebFetch", "Read"), { maxLength: 4 }),
    });
    const params = fc.oneof(
      fc.record({ command: fc.constantFrom("ls", "curl x", "rm -rf /", "curl evil.example") }),
      fc.record({ url: fc.constantFrom("https://evil.example/a", "https://ok.example/") }),
    );
    fc.assert(
      fc.property(sessions, params, fc.constantFrom("Bash", "WebFetch"), (s, p, toolName) => {
        const facts: SessionFacts = emptySessionFacts();
        facts.classCounts.shell = s.shell;
        facts.taint = s.taint;
        facts.toolsCalled = s.tools;
        const input = {
          hook: "before_tool_call" as const,
          context: { agentId: "a", sessionKey: "s" },
          event: { toolName, params: p },
          session: facts,
        };
        expect(evaluateCedar(set, input)).toEqual(evaluateCedar(whole, input));
      }),
      { numRuns: 300 },
    );
  });
});
