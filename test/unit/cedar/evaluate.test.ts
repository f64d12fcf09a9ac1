import { describe, expect, it } from "vitest";
import type { ModifyingHookName } from "../../../src/catalog/catalog.js";
import {
  afterToolCall,
  afterToolOutput,
  assertCedarTypes,
  emptySessionFacts,
  evaluateCedar,
  parseCedarPolicySet,
  type SessionFacts,
} from "../../../src/cedar/index.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { toolVocabulary } from "../../../src/vocabulary/index.js";

const context = { agentId: "agent-1", sessionKey: "s-1", runId: "r-1" };

function decide(
  policies: string,
  hook: ModifyingHookName,
  event: Record<string, unknown>,
  session: SessionFacts = emptySessionFacts(),
) {
  const set = parseCedarPolicySet(policies, "test.cedar");
  assertCedarTypes(set); // every policy in these tests type-checks against the generated schema
  return evaluateCedar(set, { hook, context, event, session });
}

const NO_RM = `@id("no-rm-rf") @reason("recursive delete")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "shell" && context.call has command && context.call.command like "*rm -rf*" };`;

describe("Cedar decisions as hookbus verdicts", () => {
  it("blocks with the forbid's @reason and names the policy", () => {
    const result = decide(NO_RM, "before_tool_call", {
      toolName: "Bash",
      params: { command: "rm -rf /" },
    });
    expect(result).toEqual({
      status: "ok",
      verdict: { block: true, blockReason: "recursive delete (Cedar policy no-rm-rf)" },
      decidedBy: ["no-rm-rf"],
    });
  });

  it("holds the same rule under every framework's name for the shell", () => {
    for (const toolName of ["exec", "Bash", "run_command", "local_shell"]) {
      const result = decide(NO_RM, "before_tool_call", {
        toolName,
        params: { cmd: ["rm", "-rf", "/tmp/x"] },
      });
      expect(result.verdict?.block, toolName).toBe(true);
    }
    expect(
      decide(NO_RM, "before_tool_call", { toolName: "Bash", params: { command: "ls" } }),
    ).toEqual({ status: "ok", decidedBy: [] });
  });

  it("builds only the call fields a set reads, each as it is with all of them", () => {
    const rule = (when: string) =>
      `@id("r") forbid (principal, action == Action::"before_tool_call", resource) when { ${when} };`;
    const command = rule(`context.call has command && context.call.command like "*rm -rf*"`);
    const url = rule(`context.call has url && context.call.url.host == "blocked.example"`);
    const text = rule(`context.call.paramsText like "*needle*"`);
    const paths = rule(`context.call.paths.contains("/etc/passwd")`);
    const nestedShell = {
      toolName: "local_shell",
      params: { action: { command: ["rm", "-rf", "/"] } },
    };
    const nestedUrl = {
      toolName: "fetch",
      params: { request: { url: "https://blocked.example/x" } },
    };
    const needle = { toolName: "anything", params: { deep: { note: "a needle here" } } };
    const file = { toolName: "read_file", params: { path: "/etc/passwd" } };
    // Each set reads one field; the call holds it where only a nested search or the JSON finds it.
    expect(decide(command, "before_tool_call", nestedShell).decidedBy).toEqual(["r"]);
    expect(decide(url, "before_tool_call", nestedUrl).decidedBy).toEqual(["r"]);
    expect(decide(text, "before_tool_call", needle).decidedBy).toEqual(["r"]);
    expect(decide(paths, "before_tool_call", file).decidedBy).toEqual(["r"]);
    // And the same sets let the other calls through.
    for (const set of [command, url, text, paths])
      expect(decide(set, "before_tool_call", { toolName: "ls", params: { dir: "/" } })).toEqual({
        status: "ok",
        decidedBy: [],
      });
  });

  it("names the policy id when a forbid has no @reason", () => {
    const result = decide(
      `forbid (principal, action == Action::"before_tool_call", resource == Tool::"exec");`,
      "before_tool_call",
      { toolName: "exec", params: {} },
    );
    expect(result.verdict).toEqual({
      block: true,
      blockReason: "forbidden by Cedar policy policy0",
    });
  });

  it("asks for approval on an @approval forbid, and a plain forbid beats it", () => {
    const approval = `@id("mail") @approval("Send this mail?") @reason("outbound mail") @severity("high")
forbid (principal, action == Action::"before_tool_call", resource is Tool) when { resource.class == "send-message" };`;
    const event = { toolName: "send_email", params: { to: "a@b.c" } };
    expect(decide(approval, "before_tool_call", event).verdict).toEqual({
      requireApproval: {
        title: "Send this mail?",
        description: "outbound mail (mail)",
        severity: "high",
      },
    });
    const both = `${approval}
@id("no-external") forbid (principal, action, resource) when { context has call && context.call.recipients.contains("a@b.c") };`;
    expect(decide(both, "before_tool_call", event).verdict).toEqual({
      block: true,
      blockReason: "forbidden by Cedar policy no-external",
    });
  });

  it("narrows before_llm_call tools away, one request per tool", () => {
    const result = decide(
      `forbid (principal, action == Action::"before_llm_call", resource is Tool) when { resource.class == "shell" };`,
      "before_llm_call",
      {
        messages: [],
        tools: [
          { name: "exec" },
          { name: "read" },
          { type: "function", function: { name: "Bash" } },
        ],
      },
    );
    expect(result.verdict).toEqual({ tools: [{ name: "read" }] });
  });

  it("narrows after_llm_call tool calls by their arguments, keeping only allowed ids", () => {
    const result = decide(
      `forbid (principal, action == Action::"after_llm_call", resource is Tool)
       when { context has call && context.call has url && context.call.url.host != "docs.example.com" };`,
      "after_llm_call",
      {
        toolCalls: [
          { id: "c1", name: "web_fetch", arguments: { url: "https://docs.example.com/a" } },
          {
            id: "c2",
            type: "function",
            function: { name: "fetch", arguments: '{"url":"https://evil.test/x"}' },
          },
          { id: "c3", name: "read", arguments: { path: "/etc/hosts" } },
        ],
      },
    );
    expect(result.verdict).toEqual({ toolCalls: [{ id: "c1" }, { id: "c3" }] });
  });

  it("blocks the whole LLM call when a forbid matches the session resource", () => {
    const result = decide(
      `forbid (principal, action == Action::"before_llm_call", resource is Session) when { context has model && context.model like "*preview*" };`,
      "before_llm_call",
      { messages: [], model: "gpt-preview", tools: [{ name: "read" }] },
    );
    expect(result.verdict?.block).toBe(true);
  });

  it("blocks a response by its content", () => {
    const result = decide(
      `@reason("leaks a key") forbid (principal, action == Action::"before_response_emit", resource) when { context.content like "*AKIA*" };`,
      "before_response_emit",
      { content: "key AKIA123", allContent: ["key AKIA123"] },
    );
    expect(result.verdict).toEqual({
      block: true,
      blockReason: "leaks a key (Cedar policy policy0)",
    });
  });

  it("treats a set with a permit as an allowlist", () => {
    const allow = `permit (principal, action == Action::"before_tool_call", resource is Tool) when { resource.class == "file-read" };`;
    expect(decide(allow, "before_tool_call", { toolName: "read", params: { path: "a" } })).toEqual({
      status: "ok",
      decidedBy: [],
    });
    expect(
      decide(allow, "before_tool_call", { toolName: "write", params: { path: "a" } }).verdict,
    ).toEqual({
      block: true,
      blockReason: "no Cedar permit policy allows this",
    });
  });

  it("reports an evaluation error instead of skipping the forbid that failed", () => {
    // Type-checks (Long arithmetic), overflows at run time: Cedar would skip the forbid.
    const set = parseCedarPolicySet(
      `forbid (principal, action == Action::"before_tool_call", resource) when { context.session.toolCalls * 9223372036854775807 > 1 };`,
    );
    const session = afterToolCall(
      afterToolCall(emptySessionFacts(), toolVocabulary.classify("read")),
      toolVocabulary.classify("read"),
    );
    const result = evaluateCedar(set, {
      hook: "before_tool_call",
      context,
      event: { toolName: "read", params: {} },
      session,
    });
    expect(result.status).toBe("error");
    expect(result.error?.code).toBe("HOOKBUS_POLICY_ERROR");
  });
});

describe("secrets found in the call, the result and the answer", () => {
  const SECRETS = `
@id("params") forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { context.call.secrets.contains("aws-access-key") };
@id("result") forbid (principal, action == Action::"before_tool_result", resource is Tool)
when { context.resultSecrets.contains("private-key") };
@id("answer") forbid (principal, action == Action::"before_response_emit", resource is Session)
when { context.contentSecrets.contains("github-token") };`;
  const token = `ghp_${"a1".repeat(18)}`;

  it("names the secret's type in call.secrets, whatever parameter holds it", () => {
    const nested = {
      toolName: "send_email",
      params: { to: "a@b.c", body: { text: "AKIAIOSFODNN7EXAMPLE" } },
    };
    expect(decide(SECRETS, "before_tool_call", nested).decidedBy).toEqual(["params"]);
    const clean = { toolName: "send_email", params: { to: "a@b.c", body: "AKIA is a prefix" } };
    expect(decide(SECRETS, "before_tool_call", clean).decidedBy).toEqual([]);
  });

  it("looks for secrets only for a set that may read them", () => {
    expect(parseCedarPolicySet(SECRETS, "s.cedar").readsSecrets).toBe(true);
    expect(parseCedarPolicySet(NO_RM, "n.cedar").readsSecrets).toBe(false);
    const whole = `forbid (principal, action, resource) when { context == context };`;
    expect(parseCedarPolicySet(whole, "w.cedar").readsSecrets).toBe(true);
  });

  it("names the types in a tool result (resultSecrets) and in any part of the answer (contentSecrets)", () => {
    const result = {
      toolName: "read",
      params: { path: "k" },
      isError: false,
      result: [{ type: "text", text: "-----BEGIN PRIVATE KEY-----\nMIIE" }],
    };
    expect(decide(SECRETS, "before_tool_result", result).decidedBy).toEqual(["result"]);
    const answer = { content: "done", allContent: ["step one", `token ${token}`] };
    expect(decide(SECRETS, "before_response_emit", answer).decidedBy).toEqual(["answer"]);
    expect(
      decide(SECRETS, "before_response_emit", { content: "done", allContent: ["done"] }).decidedBy,
    ).toEqual([]);
  });
});

describe("session facts in the context", () => {
  const NO_SEND_AFTER_WEB = `@id("no-send-after-web") @reason("the session read untrusted web content")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "send-message" && context.session.taint.contains("web-fetch") };`;

  it("forbids a send once a web fetch's output reached the session", () => {
    const event = { toolName: "send_email", params: { to: "x@y.z" } };
    const clean = emptySessionFacts();
    expect(decide(NO_SEND_AFTER_WEB, "before_tool_call", event, clean).verdict).toBeUndefined();
    const tainted = afterToolOutput(clean, toolVocabulary.classify("web_fetch"));
    expect(decide(NO_SEND_AFTER_WEB, "before_tool_call", event, tainted).verdict?.block).toBe(true);
  });

  it("counts calls per class for per-session budgets", () => {
    const budget = `@reason("at most 2 writes per session") forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "file-write" && context.session.classCounts["file-write"] >= 2 };`;
    const write = toolVocabulary.classify("Write");
    let facts = emptySessionFacts();
    const event = { toolName: "Write", params: { file_path: "a" } };
    for (let i = 0; i < 2; i++) {
      expect(decide(budget, "before_tool_call", event, facts).verdict).toBeUndefined();
      facts = afterToolCall(facts, write);
    }
    expect(decide(budget, "before_tool_call", event, facts).verdict?.block).toBe(true);
    expect(facts.toolsCalled).toEqual(["Write"]);
  });

  it("taints with mcp for any MCP tool's output", () => {
    const facts = afterToolOutput(
      emptySessionFacts(),
      toolVocabulary.classify("mcp__github__get_issue"),
    );
    expect(facts.taint).toEqual(["mcp"]);
  });
});

describe("policy sets refused before they run", () => {
  function codeOf(fn: () => unknown): string | undefined {
    try {
      fn();
    } catch (error) {
      return isHookbusError(error) ? error.code : "not a HookbusError";
    }
    return undefined;
  }

  it("refuses a policy that reads a field its hook does not have", () => {
    const set = parseCedarPolicySet(
      `forbid (principal, action == Action::"before_tool_call", resource) when { context.content like "*x*" };`,
    );
    expect(codeOf(() => assertCedarTypes(set))).toBe("HOOKBUS_INVALID_CEDAR");
  });

  it("refuses a parse error, a repeated @id and an @approval on a permit", () => {
    expect(codeOf(() => parseCedarPolicySet("forbid (principal"))).toBe("HOOKBUS_INVALID_CEDAR");
    expect(
      codeOf(() =>
        parseCedarPolicySet(
          `@id("a") forbid (principal, action, resource);\n@id("a") forbid (principal, action, resource);`,
        ),
      ),
    ).toBe("HOOKBUS_INVALID_CEDAR");
    expect(
      codeOf(() => parseCedarPolicySet(`@approval("x") permit (principal, action, resource);`)),
    ).toBe("HOOKBUS_INVALID_CEDAR");
  });
});

describe("Cedar answers remembered per set and request", () => {
  const SEND_AFTER_WEB = `@id("send-after-web") forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "send-message" && context.session.taint.contains("web-fetch") };`;

  it("answers a repeated request as the engine did, and a changed fact anew", () => {
    const set = parseCedarPolicySet(SEND_AFTER_WEB, "test.cedar");
    const event = { toolName: "send_email", params: { to: "a@example.com" } };
    const clean = {
      hook: "before_tool_call" as const,
      context,
      event,
      session: emptySessionFacts(),
    };
    const first = evaluateCedar(set, clean);
    expect(first).toEqual({ status: "ok", decidedBy: [] });
    expect(evaluateCedar(set, clean)).toEqual(first);
    const tainted = afterToolOutput(emptySessionFacts(), toolVocabulary.classify("web_fetch"));
    const again = evaluateCedar(set, { ...clean, session: tainted });
    expect(again.verdict?.block).toBe(true);
    expect(evaluateCedar(set, { ...clean, session: tainted })).toEqual(again);
    expect(evaluateCedar(set, clean)).toEqual(first);
  });

  it("never answers one set's request from another set's", () => {
    const event = { toolName: "Bash", params: { command: "rm -rf /" } };
    const input = {
      hook: "before_tool_call" as const,
      context,
      event,
      session: emptySessionFacts(),
    };
    const allow = parseCedarPolicySet(
      `forbid (principal, action == Action::"before_tool_call", resource == Tool::"nothing");`,
    );
    const deny = parseCedarPolicySet(NO_RM);
    expect(evaluateCedar(allow, input).verdict).toBeUndefined();
    expect(evaluateCedar(deny, input).verdict?.block).toBe(true);
    expect(evaluateCedar(allow, input).verdict).toBeUndefined();
  });

  it("evaluates a large request each time and decides it the same", () => {
    const set = parseCedarPolicySet(NO_RM);
    const event = { toolName: "Bash", params: { command: `rm -rf /${"x".repeat(5000)}` } };
    const input = {
      hook: "before_tool_call" as const,
      context,
      event,
      session: emptySessionFacts(),
    };
    expect(evaluateCedar(set, input).verdict?.block).toBe(true);
    expect(evaluateCedar(set, input).verdict?.block).toBe(true);
  });
});

describe("Cedar requests evaluated against the policies whose scope can match", () => {
  const SET = `@id("no-exec") forbid (principal, action == Action::"before_tool_call", resource == Tool::"exec");
@id("no-shell") forbid (principal, action == Action::"before_tool_call", resource is Tool) when { resource.class == "shell" };
@id("llm-exec") forbid (principal, action == Action::"before_llm_call", resource == Tool::"exec");
@id("any") forbid (principal, action, resource) when { context.agentId == "banned" };`;

  it("decides as the whole set does, per action and named resource", () => {
    const set = parseCedarPolicySet(SET);
    const call = (toolName: string, agentId = "agent-1") =>
      evaluateCedar(set, {
        hook: "before_tool_call",
        context: { ...context, agentId },
        event: { toolName, params: {} },
        session: emptySessionFacts(),
      });
    expect(call("exec").decidedBy).toEqual(["no-exec", "no-shell"]);
    expect(call("read_file").decidedBy).toEqual([]);
    expect(call("Bash").decidedBy).toEqual(["no-shell"]);
    expect(call("read_file", "banned").decidedBy).toEqual(["any"]);
    expect(call("exec").decidedBy).toEqual(["no-exec", "no-shell"]);
    const llm = evaluateCedar(set, {
      hook: "before_llm_call",
      context,
      event: { tools: [{ name: "exec" }, { name: "Bash" }] },
      session: emptySessionFacts(),
    });
    expect(llm.verdict).toEqual({ tools: [{ name: "Bash" }] });
    expect(llm.decidedBy).toEqual(["llm-exec"]);
  });
});
