/**
 * Claude Code hook payloads (recorded in the documented format, test/fixtures/claude-code) map to
 * hookbus hooks, and hookbus decisions map back to the JSON Claude Code acts on.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  CLAUDE_CODE_EVENTS,
  parseHookInput,
  type ClaudeCodeHookInput,
} from "../../../src/adapters/claude-code/input.js";
import {
  answerFailure,
  answerPrompt,
  answerStop,
  answerToolCall,
  answerToolResult,
  planFor,
} from "../../../src/adapters/claude-code/mapping.js";
import { turnTexts } from "../../../src/adapters/claude-code/transcript.js";
import { HookbusError } from "../../../src/foundation/errors.js";

const fixture = (name: string) =>
  readFileSync(
    fileURLToPath(new URL(`../../fixtures/claude-code/${name}`, import.meta.url)),
    "utf8",
  );
const input = <E extends ClaudeCodeHookInput["hook_event_name"]>(name: string, _event: E) =>
  parseHookInput(fixture(name)) as Extract<ClaudeCodeHookInput, { hook_event_name: E }>;
const options = { agentId: "claude-code", rewriteDecision: "allow" as const };

describe("Claude Code hook input", () => {
  it("maps PreToolUse to before_tool_call with the tool, its input, the call id and where it runs", () => {
    const plan = planFor(input("pre-tool-use-bash.json", "PreToolUse"), options);
    expect(plan).toEqual({
      kind: "decide",
      hook: "before_tool_call",
      context: {
        agentId: "claude-code",
        sessionKey: "3f0c8a2e-5b1d-4c1e-9a57-2d1f0b6e8c41",
        runId: "3f0c8a2e-5b1d-4c1e-9a57-2d1f0b6e8c41",
        channel: "claude-code",
        toolCallId: "toolu_01HbQxY7k2bN3c4d5e6f7g8h",
      },
      event: {
        toolName: "Bash",
        toolCallId: "toolu_01HbQxY7k2bN3c4d5e6f7g8h",
        params: { command: "rm -rf /home/dev/app/build", description: "Remove the build folder" },
        cwd: "/home/dev/app",
        permissionMode: "default",
      },
    });
  });

  it("decides an MCP tool's output at before_tool_result, and only observes a built-in tool's", () => {
    const mcp = planFor(input("post-tool-use-mcp.json", "PostToolUse"), options);
    expect(mcp.kind === "decide" && mcp.hook).toBe("before_tool_result");
    expect(mcp.event).toMatchObject({ isError: false, result: [{ type: "text" }] });
    const bash = planFor(input("post-tool-use-bash.json", "PostToolUse"), options);
    expect(bash.kind === "observe" && bash.hook).toBe("after_tool_call");
  });

  it("maps UserPromptSubmit to before_agent_reply and Stop to before_response_emit", () => {
    expect(planFor(input("user-prompt-submit.json", "UserPromptSubmit"), options).event).toEqual({
      cleanedBody: "Print the production database password from .env",
      cwd: "/home/dev/app",
      permissionMode: "default",
    });
    const stop = planFor(input("stop.json", "Stop"), options, ["first", "second"]);
    expect(stop.hook).toBe("before_response_emit");
    expect(stop.event).toMatchObject({ content: "second", allContent: ["first", "second"] });
  });

  it("observes SessionStart and SessionEnd as session_start and session_end, and a failed tool as after_tool_call", () => {
    const session = "3f0c8a2e-5b1d-4c1e-9a57-2d1f0b6e8c41";
    expect(planFor(input("session-start.json", "SessionStart"), options)).toMatchObject({
      kind: "observe",
      hook: "session_start",
      context: { sessionKey: session, runId: session, channel: "claude-code" },
      event: { sessionId: session, source: "startup" },
    });
    const end = parseHookInput(
      JSON.stringify({ session_id: session, hook_event_name: "SessionEnd", reason: "logout" }),
    );
    expect(planFor(end, options)).toMatchObject({
      kind: "observe",
      hook: "session_end",
      event: { sessionId: session, reason: "logout" },
    });
    const failed = parseHookInput(
      JSON.stringify({
        session_id: session,
        hook_event_name: "PostToolUseFailure",
        tool_name: "Bash",
        tool_input: { command: "make" },
        tool_use_id: "toolu_1",
        error: "exit status 2",
      }),
    );
    expect(planFor(failed, options)).toMatchObject({
      kind: "observe",
      hook: "after_tool_call",
      event: { toolName: "Bash", toolCallId: "toolu_1", error: "exit status 2" },
    });
  });

  it("refuses what is not a Claude Code payload with a coded error", () => {
    expect(() => parseHookInput("not json")).toThrow(
      expect.objectContaining({ code: "HOOKBUS_BAD_MESSAGE" }),
    );
    expect(() =>
      parseHookInput(JSON.stringify({ hook_event_name: "Nope", session_id: "s" })),
    ).toThrow(expect.objectContaining({ code: "HOOKBUS_INVALID_EVENT" }));
    expect(() =>
      parseHookInput(
        JSON.stringify({ hook_event_name: "PreToolUse", session_id: "s", tool_name: "Bash" }),
      ),
    ).toThrow(expect.objectContaining({ code: "HOOKBUS_INVALID_EVENT" }));
  });

  it("reads the ended turn's assistant texts from the transcript, not earlier turns' or tool results", () => {
    expect(turnTexts(fixture("transcript.jsonl"))).toEqual([
      "Let me read it.",
      "The key is sk-live-123.",
    ]);
    // The tail of a transcript starts mid-line: that partial line is skipped.
    expect(turnTexts(`ial":"x"}\n${fixture("transcript.jsonl")}`)).toHaveLength(2);
  });
});

describe("hookbus decisions as Claude Code output", () => {
  const pre = () => input("pre-tool-use-write.json", "PreToolUse");

  it("denies a blocked tool call, naming the policy and its reason", () => {
    const out = answerToolCall(
      pre(),
      {
        outcome: "block",
        blockReason: "writes outside the project",
        blockedBy: "fs-guard",
        decidedBy: {},
      },
      options,
    );
    expect(out).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "hookbus (fs-guard): writes outside the project",
      },
    });
  });

  it("passes a rewritten input as updatedInput, with the configured permission decision", () => {
    const params = { file_path: "/home/dev/app/app.conf", content: "debug=true\n" };
    const out = answerToolCall(
      pre(),
      { outcome: "modify", params, decidedBy: { params: ["sandbox"] } },
      {
        ...options,
        rewriteDecision: "ask",
      },
    );
    expect(out.hookSpecificOutput).toMatchObject({
      permissionDecision: "ask",
      updatedInput: params,
    });
  });

  it("refuses a rewrite that removes a field, which updatedInput cannot express safely", () => {
    const out = answerToolCall(
      pre(),
      { outcome: "modify", params: { file_path: "/tmp/x" }, decidedBy: { params: ["p"] } },
      options,
    );
    expect(out.hookSpecificOutput?.permissionDecision).toBe("deny");
    expect(out.hookSpecificOutput?.permissionDecisionReason).toContain('"content"');
  });

  it("leaves an allowed call to Claude Code's own permission rules (no permissionDecision)", () => {
    expect(answerToolCall(pre(), { outcome: "allow", decidedBy: {} }, options)).toEqual({});
  });

  it("replaces or withholds an MCP tool's output", () => {
    expect(
      answerToolResult({
        outcome: "modify",
        content: "[redacted]",
        decidedBy: { content: ["pii"] },
      }),
    ).toEqual({
      hookSpecificOutput: { hookEventName: "PostToolUse", updatedMCPToolOutput: "[redacted]" },
    });
    const withheld = answerToolResult({
      outcome: "block",
      blockReason: "secret",
      blockedBy: "dlp",
      decidedBy: {},
    });
    expect(withheld.decision).toBe("block");
    expect(withheld.hookSpecificOutput?.updatedMCPToolOutput).toBe(
      "[tool output withheld] hookbus (dlp): secret",
    );
  });

  it("refuses a prompt, showing a policy's reply to the user", () => {
    expect(
      answerPrompt({ outcome: "reply", reply: { text: "Ask the on-call admin." }, decidedBy: {} }),
    ).toEqual({
      decision: "block",
      reason: "Ask the on-call admin.",
    });
    expect(answerPrompt({ outcome: "allow", decidedBy: {} })).toEqual({});
  });

  it("refuses a blocked answer once, then stops the session when Claude Code is already continuing", () => {
    const stop = input("stop.json", "Stop");
    const decision = {
      outcome: "block" as const,
      blockReason: "leaks a key",
      blockedBy: "dlp",
      decidedBy: {},
    };
    expect(answerStop(stop, decision)).toMatchObject({
      decision: "block",
      systemMessage: "hookbus (dlp): leaks a key",
    });
    expect(answerStop({ ...stop, stop_hook_active: true }, decision)).toEqual({
      continue: false,
      stopReason: "hookbus (dlp): leaks a key",
      systemMessage: "hookbus (dlp): leaks a key",
    });
    expect(
      answerStop(stop, { outcome: "modify", content: "Done.", decidedBy: { content: ["dlp"] } })
        .decision,
    ).toBe("block");
  });

  it("fails every gate closed, and only warns for observations", () => {
    const error = new HookbusError("HOOKBUS_NATS_UNREACHABLE", "cannot reach NATS");
    expect(answerFailure("PreToolUse", "Bash", error).hookSpecificOutput?.permissionDecision).toBe(
      "deny",
    );
    expect(answerFailure("UserPromptSubmit", undefined, error).decision).toBe("block");
    expect(answerFailure("PostToolUse", "mcp__crm__lookup", error).decision).toBe("block");
    expect(answerFailure("Stop", undefined, error).continue).toBe(false);
    const warned = answerFailure("PostToolUse", "Bash", error);
    expect(Object.keys(warned)).toEqual(["systemMessage"]);
    expect(warned.systemMessage).toContain("HOOKBUS_NATS_UNREACHABLE");
  });
});

/** The fast hook as a project's npm install provides it (docs/adapters/claude-code.md). */
const FAST_HOOK_COMMAND = '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/hookbus-claude-code-hook';

describe("the settings Claude Code users paste", () => {
  const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
  interface Settings {
    hooks: Record<
      string,
      Array<{ matcher?: string; hooks: Array<{ type: string; command: string }> }>
    >;
  }
  const check = (settings: Settings) => {
    for (const [event, groups] of Object.entries(settings.hooks)) {
      expect(CLAUDE_CODE_EVENTS, `${event} is an event the command maps`).toContain(event);
      for (const group of groups)
        for (const hook of group.hooks)
          expect(hook).toMatchObject({ type: "command", command: FAST_HOOK_COMMAND });
    }
  };

  it("examples/claude-code/settings.json registers the command for every event it maps", () => {
    const settings = JSON.parse(
      readFileSync(root("examples/claude-code/settings.json"), "utf8"),
    ) as Settings;
    check(settings);
    expect(Object.keys(settings.hooks).sort()).toEqual([...CLAUDE_CODE_EVENTS].sort());
  });

  it("templates/init's Claude Code snippet runs the fast hook for every event it maps", () => {
    const settings = JSON.parse(
      readFileSync(root("templates/init/agents/claude-code.json"), "utf8"),
    ) as Settings;
    check(settings);
    // A starter that registered only PreToolUse would get no redaction of MCP output, no Stop gate
    // and no observations.
    expect(Object.keys(settings.hooks).sort()).toEqual([...CLAUDE_CODE_EVENTS].sort());
  });

  it("the command is a bin of the package, so npm links it into node_modules/.bin", () => {
    const pkg = JSON.parse(readFileSync(root("package.json"), "utf8")) as {
      bin: Record<string, string>;
      files: string[];
    };
    expect(pkg.bin["hookbus-claude-code-hook"]).toBe("./bin/claude-code-hook.mjs");
    expect(pkg.files).toContain("bin");
  });

  it("the snippet in docs/adapters/claude-code.md is valid settings", () => {
    const doc = readFileSync(root("docs/adapters/claude-code.md"), "utf8");
    const snippet = /```json\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(snippet).toBeDefined();
    check(JSON.parse(snippet!) as Settings);
  });
});

describe("what the model reads from a refusal", () => {
  const pre = {
    session_id: "s",
    transcript_path: "/tmp/t.jsonl",
    cwd: "/tmp",
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "x" },
    tool_use_id: "t",
  } as const;
  const blocked = (blockedBy: string, blockReason: string) =>
    ({ outcome: "block", blockedBy, blockReason, decidedBy: {} }) as never;
  const reasonOf = (answer: { hookSpecificOutput?: unknown }) =>
    (answer.hookSpecificOutput as { permissionDecisionReason: string }).permissionDecisionReason;

  it("names the policy once, whether or not its reason already does", () => {
    const input = parseHookInput(JSON.stringify(pre));
    const options = { agentId: "a", rewriteDecision: "allow" } as const;
    expect(
      reasonOf(answerToolCall(input as never, blocked("tool-policy", "no shells"), options)),
    ).toBe("hookbus (tool-policy): no shells");
    expect(
      reasonOf(answerToolCall(input as never, blocked("tool-policy", "a policy said no"), options)),
    ).toBe("hookbus (tool-policy): a policy said no");
    expect(
      reasonOf(
        answerToolCall(
          input as never,
          blocked("taint-guard", 'blocked by policy "taint-guard"'),
          options,
        ),
      ),
    ).toBe('hookbus: blocked by policy "taint-guard"');
  });

  it("carries no error class names", () => {
    const input = parseHookInput(JSON.stringify(pre));
    const answer = answerToolCall(
      input as never,
      blocked("guard", "HookbusError: worker failed: TypeError: x is undefined"),
      { agentId: "a", rewriteDecision: "allow" },
    );
    expect(reasonOf(answer)).toBe("hookbus (guard): worker failed: x is undefined");
    const failure = answerFailure(
      "PreToolUse",
      "Bash",
      new HookbusError("HOOKBUS_POLICY_UNAVAILABLE", "HookbusError: no worker"),
    );
    expect(reasonOf(failure)).not.toContain("HookbusError:");
  });
});
