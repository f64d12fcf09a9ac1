/** The field-level diff and the one-line summary of a changed decision, per hook. */
import { describe, expect, it } from "vitest";
import { diffDecisions } from "../../../src/replay/diff.js";

describe("diffDecisions", () => {
  it("reports nothing for decisions that differ only in decidedBy", () => {
    const result = diffDecisions(
      "before_tool_call",
      { toolName: "read_file", params: {} },
      { outcome: "modify", params: { path: "/a" }, decidedBy: { params: ["old-name"] } },
      { outcome: "modify", params: { path: "/a" }, decidedBy: { params: ["new-name"] } },
    );
    expect(result).toEqual({ diff: [], summary: "before_tool_call read_file: modify" });
  });

  it("summarises allow → block with the blocker, and lists each field that changed", () => {
    const result = diffDecisions(
      "before_tool_call",
      { toolName: "exec", params: { command: "ls" } },
      { outcome: "allow", decidedBy: {} },
      {
        outcome: "block",
        blockReason: "no shell",
        blockedBy: "no-shell",
        decidedBy: { block: ["no-shell"] },
      },
    );
    expect(result.summary).toBe("before_tool_call exec: allow → block by `no-shell`");
    expect(result.change).toBe("allow→block");
    expect(result.diff.map((d) => d.field)).toEqual(["outcome", "blockedBy", "blockReason"]);
  });

  it("summarises block → allow and a block that now comes from another policy", () => {
    const blocked = {
      outcome: "block",
      blockReason: "a",
      blockedBy: "first",
      decidedBy: { block: ["first"] },
    };
    expect(
      diffDecisions("before_tool_call", { toolName: "x", params: {} }, blocked, {
        outcome: "allow",
        decidedBy: {},
      }).summary,
    ).toBe("before_tool_call x: block by `first` → allow");
    const other = diffDecisions("before_tool_call", { toolName: "x", params: {} }, blocked, {
      outcome: "block",
      blockReason: "b",
      blockedBy: "second",
      decidedBy: { block: ["second"] },
    });
    expect(other.summary).toBe(
      'before_tool_call x: blocked by `first` → `second`, block reason "a" → "b"',
    );
    expect(other.change).toBe("block: blockedBy,blockReason");
  });

  it("calls new content at an output gate a redaction", () => {
    const result = diffDecisions(
      "before_response_emit",
      { content: "key sk-123", allContent: ["key sk-123"] },
      { outcome: "allow", decidedBy: {} },
      { outcome: "modify", content: "key [REDACTED]", decidedBy: { content: ["secrets"] } },
    );
    expect(result.summary).toBe("before_response_emit: content redacted");
    expect(result.change).toBe("allow→modify");
    expect(result.diff).toContainEqual({
      field: "content",
      after: "key [REDACTED]",
      summary: "content redacted",
    });
  });

  it("names the tools a before_llm_call decision removes or restores", () => {
    const event = {
      messages: [],
      tools: [{ name: "exec" }, { name: "read" }, { type: "function", function: { name: "web" } }],
    };
    const narrowed = diffDecisions(
      "before_llm_call",
      event,
      { outcome: "allow", decidedBy: {} },
      { outcome: "modify", tools: [{ name: "read" }], decidedBy: { tools: ["p"] } },
    );
    expect(narrowed.summary).toBe("before_llm_call: tools: exec, web removed");
    const restored = diffDecisions(
      "before_llm_call",
      event,
      { outcome: "modify", tools: [{ name: "read" }], decidedBy: { tools: ["p"] } },
      { outcome: "allow", decidedBy: {} },
    );
    expect(restored.summary).toBe("before_llm_call: tools: exec, web restored");
    expect(restored.change).toBe("modify→allow");
  });

  it("names the tool calls an after_llm_call allowlist stops, by id and tool", () => {
    const event = {
      toolCalls: [
        { id: "c1", name: "read" },
        { id: "c2", name: "delete_file" },
      ],
    };
    const result = diffDecisions(
      "after_llm_call",
      event,
      { outcome: "allow", decidedBy: {} },
      {
        outcome: "modify",
        toolCalls: [{ id: "c1", name: "read" }],
        decidedBy: { toolCalls: ["p"] },
      },
    );
    expect(result.summary).toBe(
      "after_llm_call [read, delete_file]: toolCalls: c2 (delete_file) removed",
    );
  });

  it("describes rewritten params and a reply that appears", () => {
    expect(
      diffDecisions(
        "before_tool_call",
        { toolName: "http", params: { url: "a" } },
        { outcome: "modify", params: { url: "b" }, decidedBy: { params: ["p"] } },
        { outcome: "modify", params: { url: "c" }, decidedBy: { params: ["p"] } },
      ).summary,
    ).toBe("before_tool_call http: params rewritten differently");
    expect(
      diffDecisions(
        "before_agent_reply",
        { cleanedBody: "/help" },
        { outcome: "allow", decidedBy: {} },
        { outcome: "reply", reply: { text: "hi" }, decidedBy: { reply: ["greeter"] } },
      ).summary,
    ).toBe("before_agent_reply: reply added");
  });

  it("keeps fields whose recorded value was masked out of the comparison", () => {
    const result = diffDecisions(
      "before_tool_result",
      { toolName: "read", params: {}, isError: false },
      { outcome: "modify", content: "sha256:ab", decidedBy: { content: ["s"] } },
      { outcome: "modify", content: "[REDACTED]", decidedBy: { content: ["s"] } },
      new Set(["content"]),
    );
    expect(result.diff).toEqual([]);
  });
});
