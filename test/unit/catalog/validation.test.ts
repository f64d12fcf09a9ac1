/**
 * Validation errors are a contract: a stable code, the hook, and for each problem a dotted path
 * and the rule that failed, so that an agent developer or a policy author can fix the right field
 * without reading hookbus' source.
 */
import { describe, expect, it } from "vitest";
import {
  assertHookName,
  assertModifyingHook,
  catalog,
  HOOK_NAMES,
  HookbusError,
  isHookbusError,
  isHookName,
  isModifyingHook,
  MODIFYING_HOOK_NAMES,
  modifyingHooks,
  OBSERVATIONAL_HOOK_NAMES,
  parseContext,
  parseDecision,
  parseEvent,
  parseVerdict,
  toolInputFromParams,
  type ErrorCode,
  type HookName,
  type ModifyingHookName,
} from "../../../src/index.js";

/** Runs fn, which must throw a HookbusError with the given code, and returns that error. */
function thrown(fn: () => unknown, code: ErrorCode): HookbusError {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error, "expected a HookbusError to be thrown").toBeInstanceOf(HookbusError);
  const hookbusError = error as HookbusError;
  expect(hookbusError.code).toBe(code);
  expect(isHookbusError(hookbusError, code)).toBe(true);
  expect(hookbusError.name).toBe("HookbusError");
  return hookbusError;
}

const run = { agentId: "agent-1", sessionKey: "session-1", runId: "run-1" };

describe("the catalog", () => {
  it("has the six modifying and six observational hooks of the design", () => {
    expect([...MODIFYING_HOOK_NAMES].sort()).toEqual(
      [
        "after_llm_call",
        "before_agent_reply",
        "before_llm_call",
        "before_response_emit",
        "before_tool_call",
        "before_tool_result",
      ].sort(),
    );
    expect([...OBSERVATIONAL_HOOK_NAMES].sort()).toEqual(
      [
        "after_tool_call",
        "agent_end",
        "llm_input",
        "llm_output",
        "session_end",
        "session_start",
      ].sort(),
    );
    expect(HOOK_NAMES).toHaveLength(12);
    for (const hook of MODIFYING_HOOK_NAMES) expect(catalog[hook].kind).toBe("modifying");
    for (const hook of OBSERVATIONAL_HOOK_NAMES) expect(catalog[hook].kind).toBe("observational");
  });

  it("tool gates and output gates default to fail-closed", () => {
    expect(modifyingHooks.after_llm_call.defaultFailMode).toBe("fail-closed");
    expect(modifyingHooks.before_tool_call.defaultFailMode).toBe("fail-closed");
    expect(modifyingHooks.before_tool_result.defaultFailMode).toBe("fail-closed");
    expect(modifyingHooks.before_response_emit.defaultFailMode).toBe("fail-closed");
  });

  it("isHookName and isModifyingHook do not fall for prototype keys or non-strings", () => {
    for (const name of ["toString", "__proto__", "constructor", "hasOwnProperty", "", 1, null]) {
      expect(isHookName(name), String(name)).toBe(false);
      expect(isModifyingHook(name), String(name)).toBe(false);
    }
    expect(isHookName("llm_input")).toBe(true);
    expect(isModifyingHook("llm_input")).toBe(false);
    expect(isModifyingHook("before_tool_call")).toBe(true);
  });
});

describe("hook names", () => {
  it("assertHookName returns a known name", () => {
    for (const hook of HOOK_NAMES) expect(assertHookName(hook)).toBe(hook);
  });

  it.each(["before_tool", "BEFORE_TOOL_CALL", "before-tool-call", "toString", "__proto__", ""])(
    "assertHookName(%j) throws HOOKBUS_UNKNOWN_HOOK",
    (name) => {
      const error = thrown(() => assertHookName(name), "HOOKBUS_UNKNOWN_HOOK");
      expect(error.details.hook).toBe(name);
      expect(error.message).toContain(JSON.stringify(name));
    },
  );

  it("assertHookName rejects non-strings", () => {
    thrown(() => assertHookName(42), "HOOKBUS_UNKNOWN_HOOK");
    thrown(() => assertHookName(undefined), "HOOKBUS_UNKNOWN_HOOK");
  });

  it("assertModifyingHook on an observational hook throws HOOKBUS_NOT_MODIFYING_HOOK", () => {
    for (const hook of OBSERVATIONAL_HOOK_NAMES) {
      const error = thrown(() => assertModifyingHook(hook), "HOOKBUS_NOT_MODIFYING_HOOK");
      expect(error.details.hook).toBe(hook);
      expect(error.message).toContain(hook);
    }
    for (const hook of MODIFYING_HOOK_NAMES) expect(assertModifyingHook(hook)).toBe(hook);
  });

  it("assertModifyingHook on an unknown name throws HOOKBUS_UNKNOWN_HOOK", () => {
    thrown(() => assertModifyingHook("nope"), "HOOKBUS_UNKNOWN_HOOK");
  });

  it("parse functions given a hook name from the wire fail with a code, not a TypeError", () => {
    thrown(() => parseEvent("nope" as HookName, {}), "HOOKBUS_UNKNOWN_HOOK");
    thrown(() => parseEvent("toString" as HookName, {}), "HOOKBUS_UNKNOWN_HOOK");
    thrown(() => parseContext("nope" as HookName, run), "HOOKBUS_UNKNOWN_HOOK");
    thrown(
      () => parseVerdict("after_tool_call" as ModifyingHookName, {}),
      "HOOKBUS_NOT_MODIFYING_HOOK",
    );
    thrown(() => parseVerdict("nope" as ModifyingHookName, {}), "HOOKBUS_UNKNOWN_HOOK");
    thrown(
      () =>
        parseDecision("session_start" as ModifyingHookName, { outcome: "allow", decidedBy: {} }),
      "HOOKBUS_NOT_MODIFYING_HOOK",
    );
  });
});

describe("events", () => {
  it("names hook, dotted path and rule for a message without a role", () => {
    const error = thrown(
      () =>
        parseEvent("before_llm_call", {
          messages: [{ role: "user", content: "hi" }, { content: "no role" }],
        }),
      "HOOKBUS_INVALID_EVENT",
    );
    expect(error.details.hook).toBe("before_llm_call");
    expect(error.details.policy).toBeUndefined();
    expect(error.details.issues).toEqual([
      expect.objectContaining({ path: "messages.1.role", rule: "custom" }),
    ]);
    expect(error.message).toContain("before_llm_call");
    expect(error.message).toContain("messages.1.role");
    expect(error.message).toContain("needs a role (chat message) or a type");
    // The wire form carries the same details.
    expect(error.toJSON()).toEqual({
      code: "HOOKBUS_INVALID_EVENT",
      message: error.message,
      details: error.details,
    });
  });

  it("an empty role is too_small", () => {
    const error = thrown(
      () => parseEvent("before_llm_call", { messages: [{ role: "", content: "x" }] }),
      "HOOKBUS_INVALID_EVENT",
    );
    expect(error.details.issues).toEqual([
      expect.objectContaining({ path: "messages.0.role", rule: "too_small" }),
    ]);
  });

  it("a content part without a type names the part", () => {
    const error = thrown(
      () =>
        parseEvent("before_llm_call", {
          messages: [{ role: "user", content: [{ type: "text", text: "a" }, { text: "b" }] }],
        }),
      "HOOKBUS_INVALID_EVENT",
    );
    // content is a union (string | parts | null); zod reports the union at the content path.
    const paths = error.details.issues?.map((i) => i.path) ?? [];
    expect(paths.some((p) => p.startsWith("messages.0.content"))).toBe(true);
  });

  it("accepts what frameworks produce: Responses-API items and non-object tool input (issue 13)", () => {
    const messages = [
      { role: "user", content: "weather in Paris?" },
      {
        type: "function_call",
        call_id: "fc_1",
        name: "get_weather",
        arguments: '{"city":"Paris"}',
      },
      { type: "function_call_output", call_id: "fc_1", output: '{"tempC":15}' },
      { type: "reasoning", id: "rs_1", summary: [] },
    ];
    expect(parseEvent("before_llm_call", { messages }).messages).toStrictEqual(messages);
    // Policies always see an object: a non-object input is presented as {input: value}.
    for (const input of ["ls -la", 3, true, null, ["a", "b"]]) {
      const event = parseEvent("before_tool_call", { toolName: "t", params: input });
      expect(event.params).toStrictEqual({ input });
      expect(toolInputFromParams(input, { input: "rewritten" })).toBe("rewritten");
    }
    const object = { cmd: "ls" };
    expect(parseEvent("before_tool_call", { toolName: "t", params: object }).params).toStrictEqual(
      object,
    );
    expect(toolInputFromParams(object, { cmd: "pwd" })).toStrictEqual({ cmd: "pwd" });
    expect(parseEvent("after_tool_call", { toolName: "t", params: "q" }).params).toStrictEqual({
      input: "q",
    });
  });

  it("a value that is not an object is reported at the root", () => {
    for (const value of [null, "x", 3, []]) {
      const error = thrown(() => parseEvent("before_tool_call", value), "HOOKBUS_INVALID_EVENT");
      expect(error.details.issues).toEqual([
        expect.objectContaining({ path: "", rule: "invalid_type" }),
      ]);
      expect(error.message).toContain("(root)");
    }
  });

  it("reports every missing required field of before_tool_result", () => {
    const error = thrown(() => parseEvent("before_tool_result", {}), "HOOKBUS_INVALID_EVENT");
    const paths = error.details.issues?.map((i) => i.path) ?? [];
    // (`result` is z.unknown() without .optional(): zod 4 reports its absent key as well.)
    expect(paths).toEqual(expect.arrayContaining(["isError", "params", "toolName"]));
    // params takes any JSON value (an object or not), so its absence fails every branch.
    for (const issue of error.details.issues ?? [])
      expect(issue.rule).toBe(issue.path === "params" ? "invalid_union" : "invalid_type");
  });

  it.each([
    ["before_agent_reply", { cleanedBody: 1 }, "cleanedBody", "invalid_type"],
    ["before_llm_call", { messages: [], iteration: -1 }, "iteration", "too_small"],
    ["before_llm_call", { messages: [], iteration: 1.5 }, "iteration", "invalid_type"],
    [
      "before_llm_call",
      { messages: [], tools: [{ description: "x" }] },
      "tools.0",
      "invalid_union",
    ],
    ["after_llm_call", { toolCalls: [{ id: "1" }] }, "toolCalls.0", "invalid_union"],
    ["after_llm_call", {}, "toolCalls", "invalid_type"],
    ["before_tool_call", { toolName: "", params: {} }, "toolName", "too_small"],
    ["before_tool_call", { toolName: "t" }, "params", "invalid_union"],
    ["before_llm_call", { messages: [{ role: 5 }] }, "messages.0.role", "invalid_type"],
    [
      "before_response_emit",
      { content: "x", allContent: ["a", 2] },
      "allContent.1",
      "invalid_type",
    ],
    ["after_tool_call", { toolName: "t", params: {}, blocked: "yes" }, "blocked", "invalid_type"],
    ["llm_output", { usage: { input: "3" } }, "usage.input", "invalid_type"],
    ["agent_end", {}, "success", "invalid_type"],
    ["session_end", { messageCount: -1 }, "messageCount", "too_small"],
  ] as const)("%s event %j: %s (%s)", (hook, event, path, rule) => {
    const error = thrown(() => parseEvent(hook, event), "HOOKBUS_INVALID_EVENT");
    expect(error.details.hook).toBe(hook);
    expect(error.details.issues).toContainEqual(expect.objectContaining({ path, rule }));
    expect(error.message).toContain(hook);
    expect(error.message).toContain(`${path}:`);
    expect(error.message).toContain(`(${rule})`);
  });

  it("lists at most five issues in the message and counts the rest", () => {
    const messages = Array.from({ length: 8 }, () => ({ content: "no role" }));
    const error = thrown(
      () => parseEvent("before_llm_call", { messages }),
      "HOOKBUS_INVALID_EVENT",
    );
    expect(error.details.issues).toHaveLength(8);
    expect(error.message).toContain("messages.4.role");
    expect(error.message).not.toContain("messages.5.role");
    expect(error.message).toContain("and 3 more");
  });
});

describe("contexts", () => {
  it("every hook accepts a full context", () => {
    for (const hook of HOOK_NAMES) expect(parseContext(hook, run)).toStrictEqual(run);
  });

  it.each(HOOK_NAMES)("%s requires a non-empty agentId and sessionKey", (hook) => {
    for (const [field, value] of [
      ["agentId", ""],
      ["agentId", undefined],
      ["sessionKey", ""],
      ["sessionKey", undefined],
      ["agentId", 7],
    ] as const) {
      const error = thrown(
        () => parseContext(hook, { ...run, [field]: value }),
        "HOOKBUS_INVALID_CONTEXT",
      );
      expect(error.details.hook).toBe(hook);
      expect(error.details.issues).toEqual([
        expect.objectContaining({
          path: field,
          rule: value === "" ? "too_small" : "invalid_type",
        }),
      ]);
      expect(error.message).toContain(hook);
      expect(error.message).toContain(field);
    }
  });

  const sessionHooks: HookName[] = ["session_start", "session_end"];
  const runHooks = HOOK_NAMES.filter((h) => !sessionHooks.includes(h));

  // Issue 13: frameworks do not always have a run id (the session is then the run).
  it.each(runHooks)("%s (inside a run) accepts no runId, but rejects an empty one", (hook) => {
    const { runId: _omit, ...noRun } = run;
    expect(parseContext(hook, noRun)).toStrictEqual(noRun);
    const error = thrown(
      () => parseContext(hook, { ...run, runId: "" }),
      "HOOKBUS_INVALID_CONTEXT",
    );
    expect(error.details.issues).toEqual([
      expect.objectContaining({ path: "runId", rule: "too_small" }),
    ]);
  });

  it.each(sessionHooks)("%s does not require runId, but rejects an empty one", (hook) => {
    const { runId: _omit, ...noRun } = run;
    expect(parseContext(hook, noRun)).toStrictEqual(noRun);
    const error = thrown(
      () => parseContext(hook, { ...run, runId: "" }),
      "HOOKBUS_INVALID_CONTEXT",
    );
    expect(error.details.issues).toEqual([
      expect.objectContaining({ path: "runId", rule: "too_small" }),
    ]);
  });

  it("tool hooks type-check the optional tool fields", () => {
    const error = thrown(
      () => parseContext("before_tool_call", { ...run, toolCallId: 5 }),
      "HOOKBUS_INVALID_CONTEXT",
    );
    expect(error.details.issues).toEqual([
      expect.objectContaining({ path: "toolCallId", rule: "invalid_type" }),
    ]);
  });
});

describe("verdicts", () => {
  it("accept no opinion ({}) for every modifying hook", () => {
    for (const hook of MODIFYING_HOOK_NAMES) expect(parseVerdict(hook, {})).toStrictEqual({});
  });

  it.each([
    ["before_agent_reply", { reply: { text: "Approved.", buttons: ["ok"] }, reason: "wizard" }],
    [
      "before_llm_call",
      { messages: [], systemPrompt: "", tools: [], block: false, blockReason: "r" },
    ],
    ["after_llm_call", { toolCalls: [{ id: "call_1" }], block: true, blockReason: "no" }],
    ["before_tool_call", { params: { command: "ls" }, block: false }],
    ["before_tool_result", { content: [{ type: "text", text: "x" }], block: true }],
    ["before_response_emit", { content: "", allContent: ["a"], blockReason: "pii" }],
  ] as const)("%s accepts a full verdict %j", (hook, verdict) => {
    expect(parseVerdict(hook, verdict)).toStrictEqual(verdict);
  });

  // One field per hook that a policy author could plausibly write but that hook does not allow.
  it.each([
    ["before_agent_reply", { reply: { text: "hi" }, block: true }, "block"],
    ["before_llm_call", { messages: [], toolCalls: [] }, "toolCalls"],
    ["after_llm_call", { toolCalls: [], tools: [] }, "tools"],
    ["before_tool_call", { block: true, content: "x" }, "content"],
    ["before_tool_result", { content: "x", params: {} }, "params"],
    ["before_response_emit", { content: "x", blockreason: "typo" }, "blockreason"],
  ] as const)("%s is strict: %j is rejected (unrecognized_keys)", (hook, verdict, key) => {
    const error = thrown(
      () => parseVerdict(hook, verdict, "pii-redactor"),
      "HOOKBUS_INVALID_VERDICT",
    );
    expect(error.details.hook).toBe(hook);
    expect(error.details.policy).toBe("pii-redactor");
    expect(error.details.issues).toEqual([
      expect.objectContaining({ path: "", rule: "unrecognized_keys" }),
    ]);
    expect(error.details.issues?.[0]?.message).toContain(key);
    expect(error.message).toContain(hook);
    expect(error.message).toContain('"pii-redactor"');
    expect(error.message).toContain("unrecognized_keys");
    expect(error.message).toContain(key);
  });

  it("strictness applies to nested verdict objects only where the schema says so", () => {
    // ReplyPayload and allowlist entries are loose (a reply may carry channel-specific fields).
    expect(parseVerdict("before_agent_reply", { reply: { text: "x", mediaUrl: "u" } })).toEqual({
      reply: { text: "x", mediaUrl: "u" },
    });
  });

  it.each([
    ["before_agent_reply", { reply: { body: "hi" } }, "reply.text", "invalid_type"],
    ["before_agent_reply", { reply: "hi" }, "reply", "invalid_type"],
    ["before_llm_call", { messages: [{ content: "x" }] }, "messages.0.role", "custom"],
    ["before_llm_call", { tools: [{}] }, "tools.0", "invalid_union"],
    ["after_llm_call", { toolCalls: [{ id: 1 }] }, "toolCalls.0.id", "invalid_type"],
    ["after_llm_call", { toolCalls: "call_1" }, "toolCalls", "invalid_type"],
    ["before_tool_call", { block: "yes" }, "block", "invalid_type"],
    ["before_tool_call", { params: "ls" }, "params", "invalid_type"],
    ["before_tool_result", { content: 42 }, "content", "invalid_union"],
    ["before_response_emit", { allContent: ["a", null] }, "allContent.1", "invalid_type"],
    ["before_response_emit", { blockReason: 3 }, "blockReason", "invalid_type"],
  ] as const)("%s verdict %j: %s (%s)", (hook, verdict, path, rule) => {
    const error = thrown(() => parseVerdict(hook, verdict), "HOOKBUS_INVALID_VERDICT");
    expect(error.details.hook).toBe(hook);
    expect(error.details).not.toHaveProperty("policy");
    expect(error.details.issues).toContainEqual(expect.objectContaining({ path, rule }));
    expect(error.message).toContain(`${hook} verdict is invalid`);
    expect(error.message).toContain(`${path}: `);
    expect(error.message).toContain(`(${rule})`);
  });

  it("a verdict that is not an object is rejected at the root", () => {
    for (const value of [null, true, "block", []]) {
      const error = thrown(
        () => parseVerdict("before_tool_call", value),
        "HOOKBUS_INVALID_VERDICT",
      );
      expect(error.details.issues).toEqual([
        expect.objectContaining({ path: "", rule: "invalid_type" }),
      ]);
    }
  });
});

describe("decisions", () => {
  it("accept a well-formed decision and reject a malformed one", () => {
    const decision = {
      outcome: "block",
      blockReason: "no shell",
      blockedBy: "shell-gate",
      decidedBy: { block: ["shell-gate"] },
    };
    expect(parseDecision("before_tool_call", decision)).toStrictEqual(decision);
    const error = thrown(
      () => parseDecision("before_tool_call", { ...decision, outcome: "deny" }),
      "HOOKBUS_INVALID_DECISION",
    );
    expect(error.details.issues).toContainEqual(
      expect.objectContaining({ path: "outcome", rule: "invalid_value" }),
    );
    thrown(
      () => parseDecision("before_tool_call", { ...decision, content: "x" }),
      "HOOKBUS_INVALID_DECISION",
    );
  });
});
