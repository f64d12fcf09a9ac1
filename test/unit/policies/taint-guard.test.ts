import { describe, expect, it } from "vitest";
import { createSessionState, MemorySessionStateStore } from "../../../src/index.js";
import {
  defaultTaintGuard,
  TAINT_STATE_KEY,
  taintGuard,
  type Taint,
} from "../../../services/policies/index.js";
import { observe, verdictOf } from "./helpers.js";

const result = (toolName: string, toolCallId = "t-1") => ({
  toolName,
  toolCallId,
  params: {},
  result: "<html>hello</html>",
  isError: false,
});
const send = (toolName = "send_email") => ({ toolName, params: { to: "boss@example.com" } });

describe("taint-guard", () => {
  it("allows outbound tools until an untrusted result, then blocks them naming the tainting tool", async () => {
    const state = new MemorySessionStateStore();
    expect(
      await verdictOf(defaultTaintGuard, "before_tool_call", send(), { state }),
    ).toBeUndefined();
    // The result is recorded and passed through unchanged.
    expect(
      await verdictOf(defaultTaintGuard, "before_tool_result", result("web_fetch", "tc-9"), {
        state,
      }),
    ).toBeUndefined();
    expect(await verdictOf(defaultTaintGuard, "before_tool_call", send(), { state })).toEqual({
      block: true,
      blockReason:
        'tool "send_email" sends data out, and this session read untrusted content from "web_fetch" (call tc-9): outbound tools are blocked for the rest of the session by policy "taint-guard"',
    });
    // Every sink, for every later call.
    for (const sink of ["http_post", "slack_post", "upload_file", "send_email"])
      expect(
        (await verdictOf(defaultTaintGuard, "before_tool_call", send(sink), { state }))?.block,
      ).toBe(true);
  });

  it("leaves tools that do not send data out alone in a tainted session", async () => {
    const state = new MemorySessionStateStore();
    await verdictOf(defaultTaintGuard, "before_tool_result", result("read_email"), { state });
    for (const tool of ["read_file", "web_fetch", "summarise"])
      expect(
        await verdictOf(
          defaultTaintGuard,
          "before_tool_call",
          { toolName: tool, params: {} },
          { state },
        ),
      ).toBeUndefined();
  });

  it("is not tainted by results of trusted tools, and taints only its own session", async () => {
    const state = new MemorySessionStateStore();
    await verdictOf(defaultTaintGuard, "before_tool_result", result("read_file"), { state });
    expect(
      await verdictOf(defaultTaintGuard, "before_tool_call", send(), { state }),
    ).toBeUndefined();
    await verdictOf(defaultTaintGuard, "before_tool_result", result("web_fetch"), {
      state,
      sessionKey: "other",
    });
    expect(
      await verdictOf(defaultTaintGuard, "before_tool_call", send(), { state }),
    ).toBeUndefined();
    expect(
      (
        await verdictOf(defaultTaintGuard, "before_tool_call", send(), {
          state,
          sessionKey: "other",
        })
      )?.block,
    ).toBe(true);
  });

  it("is tainted by an after_tool_call observation too (idempotent, first tool kept), but not by a blocked call", async () => {
    const state = new MemorySessionStateStore();
    await observe(
      defaultTaintGuard,
      "after_tool_call",
      { toolName: "browser_open", params: {}, blocked: true, blockReason: "no" },
      { state },
    );
    expect(
      await verdictOf(defaultTaintGuard, "before_tool_call", send(), { state }),
    ).toBeUndefined();

    const seen = { toolName: "browser_open", toolCallId: "b-1", params: {}, result: "page" };
    await observe(defaultTaintGuard, "after_tool_call", seen, { state });
    await observe(defaultTaintGuard, "after_tool_call", seen, { state }); // redelivered
    await verdictOf(defaultTaintGuard, "before_tool_result", result("web_fetch", "w-2"), { state });
    const taint = await createSessionState(state, "taint-guard", "s-1").get<Taint>(TAINT_STATE_KEY);
    expect(taint).toMatchObject({
      tool: "browser_open",
      toolCallId: "b-1",
      via: "after_tool_call",
    });
    expect(
      (await verdictOf(defaultTaintGuard, "before_tool_call", send(), { state }))?.blockReason,
    ).toMatch(/from "browser_open" \(call b-1\)/);
  });

  it("stops offering sinks to the model once tainted (hideSinks), and not before", async () => {
    const state = new MemorySessionStateStore();
    const tools = [
      { name: "web_fetch" },
      { name: "send_email" },
      { type: "function" as const, function: { name: "http_post" } },
    ];
    expect(
      await verdictOf(defaultTaintGuard, "before_llm_call", { messages: [], tools }, { state }),
    ).toBeUndefined();
    await verdictOf(defaultTaintGuard, "before_tool_result", result("web_fetch"), { state });
    expect(
      await verdictOf(defaultTaintGuard, "before_llm_call", { messages: [], tools }, { state }),
    ).toEqual({ tools: [{ name: "web_fetch" }] });
    expect(
      await verdictOf(
        taintGuard({ hideSinks: false }),
        "before_llm_call",
        { messages: [], tools },
        { state },
      ),
    ).toBeUndefined();
  });

  it("uses the configured sources and sinks (globs allowed)", async () => {
    const p = taintGuard({ untrustedSources: ["rss_*"], sinks: ["tweet"] });
    const state = new MemorySessionStateStore();
    await verdictOf(p, "before_tool_result", result("web_fetch"), { state });
    expect(await verdictOf(p, "before_tool_call", send("tweet"), { state })).toBeUndefined();
    await verdictOf(p, "before_tool_result", result("rss_read"), { state });
    expect((await verdictOf(p, "before_tool_call", send("tweet"), { state }))?.block).toBe(true);
    expect(await verdictOf(p, "before_tool_call", send("send_email"), { state })).toBeUndefined();
  });
});
