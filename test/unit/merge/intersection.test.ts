/**
 * Intersection latch for allowlists: `tools` by name (before_llm_call) and `toolCalls` by id
 * (after_llm_call). Each policy can only narrow; the decision is the ORIGINAL list filtered by
 * the surviving keys, so no policy can add an entry or change a definition.
 */
import { describe, expect, it } from "vitest";
import { toolDefinitionName, type HookEvent } from "../../../src/index.js";
import { ok, checkedMerge as merge } from "../../support/merge.js";

const read = { name: "read", description: "Read a file", input_schema: { type: "object" } };
const write = { name: "write", description: "Write a file" };
const exec = { type: "function" as const, function: { name: "exec", description: "Run a shell" } };

const llmEvent: HookEvent<"before_llm_call"> = {
  messages: [{ role: "user", content: "hi" }],
  tools: [read, write, exec],
};

function names(tools: readonly unknown[] | undefined): string[] | undefined {
  return tools?.map((t) => toolDefinitionName(t as Parameters<typeof toolDefinitionName>[0]));
}

describe("intersection latch: before_llm_call tools (by name)", () => {
  it("narrows the tools to the names a policy lists", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("allow-read", 1, { tools: [{ name: "read" }, { name: "write" }] }),
    ]);
    expect(result.decision.outcome).toBe("modify");
    expect(names(result.decision.tools)).toEqual(["read", "write"]);
    expect(result.decision.decidedBy).toEqual({ tools: ["allow-read"] });
  });

  it("does not let a lower-priority policy widen the tool list", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("strict", 10, { tools: [{ name: "read" }] }),
      ok("lenient", 1, { tools: [{ name: "read" }, { name: "write" }, { name: "exec" }] }),
    ]);
    expect(names(result.decision.tools)).toEqual(["read"]);
  });

  it("intersects successive allowlists and names every policy that listed tools", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("a", 3, { tools: [{ name: "read" }, { name: "write" }] }),
      ok("b", 2, {}),
      ok("c", 1, { tools: [{ name: "write" }, { name: "exec" }] }),
    ]);
    expect(names(result.decision.tools)).toEqual(["write"]);
    expect(result.decision.decidedBy).toEqual({ tools: ["a", "c"] });
  });

  it("never adds a tool the agent did not offer", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("smuggler", 1, { tools: [{ name: "read" }, { name: "rm_rf", description: "evil" }] }),
    ]);
    expect(names(result.decision.tools)).toEqual(["read"]);
  });

  it("returns the original definitions, so a policy cannot change a tool's definition", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("rewriter", 1, {
        tools: [
          { name: "read", description: "Read ANY file, including secrets", input_schema: {} },
          { type: "function", function: { name: "exec", description: "harmless" } },
        ],
      }),
    ]);
    expect(result.decision.tools).toEqual([read, exec]);
    expect(result.decision.tools?.[0]).toBe(llmEvent.tools?.[0]);
  });

  it("matches OpenAI-shaped {type:'function', function:{name}} definitions by function name", () => {
    const flatVerdict = merge("before_llm_call", llmEvent, [
      ok("p", 1, { tools: [{ name: "exec" }] }),
    ]);
    expect(flatVerdict.decision.tools).toEqual([exec]);

    const openAiVerdict = merge("before_llm_call", llmEvent, [
      ok("p", 1, { tools: [{ type: "function", function: { name: "read" } }, { name: "exec" }] }),
    ]);
    expect(openAiVerdict.decision.tools).toEqual([read, exec]);
  });

  it("keeps the original order, whatever order the policy lists names in", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("p", 1, { tools: [{ name: "exec" }, { name: "read" }] }),
    ]);
    expect(names(result.decision.tools)).toEqual(["read", "exec"]);
  });

  it("treats tools: [] as removing every tool, a logged modify (not allow, not block)", () => {
    const result = merge("before_llm_call", llmEvent, [ok("lockdown", 1, { tools: [] })]);
    expect(result.decision.outcome).toBe("modify");
    expect(result.decision.tools).toEqual([]);
    expect(result.decision.decidedBy).toEqual({ tools: ["lockdown"] });
  });

  it("does not let a lower-priority list restore tools after tools: []", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("lockdown", 5, { tools: [] }),
      ok("restore", 1, { tools: [{ name: "read" }] }),
    ]);
    expect(result.decision.tools).toEqual([]);
  });

  it("leaves the tools untouched (no tools field) when no policy lists tools", () => {
    const result = merge("before_llm_call", llmEvent, [ok("quiet", 1, { tools: undefined })]);
    expect(result.decision.outcome).toBe("allow");
    expect("tools" in result.decision).toBe(false);
  });

  it("gives an empty list when the event offered no tools and a policy lists some", () => {
    const result = merge("before_llm_call", { messages: [] }, [
      ok("p", 1, { tools: [{ name: "read" }] }),
    ]);
    expect(result.decision.tools).toEqual([]);
  });
});

const calls = [
  { id: "call_read", name: "read", arguments: { path: "a.txt" } },
  {
    id: "call_exec",
    type: "function" as const,
    function: { name: "exec", arguments: '{"cmd":"ls"}' },
  },
  { name: "write", arguments: { path: "b.txt" } },
  { id: "", name: "write", arguments: { path: "c.txt" } },
];
const afterEvent: HookEvent<"after_llm_call"> = { toolCalls: calls, model: "m" };

describe("intersection latch: after_llm_call toolCalls (by id)", () => {
  it("narrows the tool calls to the ids a policy lists", () => {
    const result = merge("after_llm_call", afterEvent, [
      ok("gate", 1, { toolCalls: [{ id: "call_read" }] }),
    ]);
    expect(result.decision.outcome).toBe("modify");
    expect(result.decision.toolCalls).toEqual([calls[0]]);
    expect(result.decision.decidedBy).toEqual({ toolCalls: ["gate"] });
  });

  it("does not let a lower-priority policy re-allow a call a higher one removed", () => {
    const result = merge("after_llm_call", afterEvent, [
      ok("strict", 9, { toolCalls: [{ id: "call_read" }] }),
      ok("lenient", 1, { toolCalls: [{ id: "call_read" }, { id: "call_exec" }] }),
    ]);
    expect(result.decision.toolCalls).toEqual([calls[0]]);
    expect(result.decision.decidedBy).toEqual({ toolCalls: ["strict", "lenient"] });
  });

  it("keeps OpenAI-shaped calls verbatim when their id is allowed", () => {
    const result = merge("after_llm_call", afterEvent, [
      ok("gate", 1, { toolCalls: [{ id: "call_exec" }] }),
    ]);
    expect(result.decision.toolCalls).toEqual([calls[1]]);
    expect(result.decision.toolCalls?.[0]).toBe(calls[1]);
  });

  it("excludes calls without an id (or with an empty id) whenever an allowlist is active", () => {
    const result = merge("after_llm_call", afterEvent, [
      ok("gate", 1, { toolCalls: [{ id: "call_read" }, { id: "call_exec" }] }),
    ]);
    expect(result.decision.toolCalls).toEqual([calls[0], calls[1]]);
  });

  it("lets every call (with or without an id) run when no allowlist is active", () => {
    const result = merge("after_llm_call", afterEvent, [ok("quiet", 1, {})]);
    expect(result.decision.outcome).toBe("allow");
    expect("toolCalls" in result.decision).toBe(false);
  });

  it("makes verdict entries without an id allow nothing", () => {
    const result = merge("after_llm_call", afterEvent, [
      ok("sloppy", 1, { toolCalls: [{}, { id: "" }, { name: "write" }] }),
    ]);
    expect(result.decision.outcome).toBe("modify");
    expect(result.decision.toolCalls).toEqual([]);
  });

  it("never adds a call the model did not produce", () => {
    const result = merge("after_llm_call", afterEvent, [
      ok("smuggler", 1, { toolCalls: [{ id: "call_read" }, { id: "call_evil", name: "rm" }] }),
    ]);
    expect(result.decision.toolCalls).toEqual([calls[0]]);
  });

  it("treats toolCalls: [] as an active allowlist that stops every call (modify)", () => {
    const result = merge("after_llm_call", afterEvent, [ok("none", 1, { toolCalls: [] })]);
    expect(result.decision.outcome).toBe("modify");
    expect(result.decision.toolCalls).toEqual([]);
    expect(result.decision.decidedBy).toEqual({ toolCalls: ["none"] });
  });
});
