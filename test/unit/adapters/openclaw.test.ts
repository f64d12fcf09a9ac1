/** The OpenClaw plugin's pure parts: its settings, its manifest, and the mapping both ways. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { HookbusError } from "../../../src/foundation/errors.js";
import {
  DEFAULT_OPENCLAW_TIMEOUT_MS,
  OpenClawPluginConfig,
  parsePluginConfig,
} from "../../../src/adapters/openclaw/config.js";
import {
  answerAgentReply,
  answerMessageSending,
  answerToolCall,
  answerToolResult,
  failAgentReply,
  failMessageSending,
  failToolCall,
  failToolResult,
  NO_SESSION,
  runContext,
} from "../../../src/adapters/openclaw/mapping.js";
import { llmInputEvent, sessionContext } from "../../../src/adapters/openclaw/observations.js";

const json = (path: string) =>
  JSON.parse(readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8")) as Record<
    string,
    unknown
  >;

function thrown(fn: () => unknown): HookbusError {
  try {
    fn();
  } catch (error) {
    return error as HookbusError;
  }
  throw new Error("expected a throw");
}

const down = new HookbusError("HOOKBUS_COORDINATOR_UNAVAILABLE", "nobody answered");
const decided = { decidedBy: {} };

describe("the plugin's settings", () => {
  it("defaults the agent and the deadline; the connection comes from the environment", () => {
    expect(parsePluginConfig(undefined)).toEqual({
      agentId: "openclaw",
      timeoutMs: DEFAULT_OPENCLAW_TIMEOUT_MS,
    });
  });

  it("a bad field is HOOKBUS_INVALID_ARGUMENT naming it under plugins.entries.hookbus.config", () => {
    const unknown = thrown(() => parsePluginConfig({ sever: "nats://x" }));
    expect(unknown.code).toBe("HOOKBUS_INVALID_ARGUMENT");
    expect(unknown.message).toMatch(/^plugins\.entries\.hookbus\.config\./);
    const slow = thrown(() => parsePluginConfig({ timeoutMs: 600_001 }));
    expect(slow.message).toContain("config.timeoutMs");
    expect(thrown(() => parsePluginConfig({ agentId: "" })).code).toBe("HOOKBUS_INVALID_ARGUMENT");
    expect(thrown(() => parsePluginConfig({ namespace: "x".repeat(129) })).code).toBe(
      "HOOKBUS_INVALID_ARGUMENT",
    );
  });

  it("the manifest's configSchema declares exactly the settings the plugin reads, with their limits", () => {
    const manifest = json("plugins/openclaw/openclaw.plugin.json") as {
      id: string;
      configSchema: {
        additionalProperties: boolean;
        properties: Record<string, Record<string, unknown>>;
      };
      contracts: { agentToolResultMiddleware: string[] };
    };
    expect(manifest.id).toBe("hookbus");
    expect(manifest.contracts.agentToolResultMiddleware).toEqual(["openclaw"]);
    expect(manifest.configSchema.additionalProperties).toBe(false);
    const generated = z.toJSONSchema(OpenClawPluginConfig, { io: "input" }) as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(manifest.configSchema.properties).sort()).toEqual(
      Object.keys(generated.properties).sort(),
    );
    for (const [name, property] of Object.entries(generated.properties)) {
      const declared = manifest.configSchema.properties[name]!;
      for (const limit of ["type", "minLength", "maxLength", "maximum"] as const)
        expect(declared[limit], `${name}.${limit}`).toEqual(property[limit]);
    }
  });

  it("the shipped entry loads the package's hookbus/openclaw, which package.json exports", () => {
    const pkg = json("plugins/openclaw/package.json") as { openclaw: { extensions: string[] } };
    expect(pkg.openclaw.extensions).toEqual(["./index.js"]);
    const root = json("package.json") as { exports: Record<string, unknown>; files: string[] };
    expect(root.exports["./openclaw"]).toBeDefined();
    expect(root.files).toContain("plugins/openclaw");
  });

  it("docs/adapters/openclaw.md shows the example openclaw.json as it is", () => {
    const doc = readFileSync(
      new URL("../../../docs/adapters/openclaw.md", import.meta.url),
      "utf8",
    );
    const block = /```json\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(JSON.parse(block ?? "null")).toEqual(json("examples/openclaw/openclaw.json"));
  });

  it("the example openclaw.json's hookbus settings parse", () => {
    const example = json("examples/openclaw/openclaw.json") as {
      plugins: { entries: { hookbus: { config: unknown } } };
    };
    expect(parsePluginConfig(example.plugins.entries.hookbus.config).agentId).toBe("openclaw");
  });
});

describe("OpenClaw's context as hookbus's", () => {
  it("the agent is hookbus's; OpenClaw's agent, session, run and channel travel along", () => {
    expect(
      runContext("oc", {
        agentId: "main",
        sessionKey: "agent:main:x",
        runId: "r1",
        messageProvider: "slack",
      }),
    ).toEqual({
      agentId: "oc",
      sessionKey: "agent:main:x",
      runId: "r1",
      channel: "slack",
      openclawAgentId: "main",
    });
  });

  it("without a session key the session id stands in, then a fixed session; the event's run id fills in", () => {
    expect(runContext("oc", { sessionId: "sid" }, "r2")).toEqual({
      agentId: "oc",
      sessionKey: "sid",
      runId: "r2",
    });
    expect(runContext("oc", undefined)).toEqual({ agentId: "oc", sessionKey: NO_SESSION });
  });
});

describe("OpenClaw's observations as hookbus's", () => {
  it("a session hook's session: the event's key, else the context's, else the session id", () => {
    expect(sessionContext("oc", { sessionId: "sid", sessionKey: "k" }, {}).sessionKey).toBe("k");
    expect(sessionContext("oc", { sessionId: "sid" }, { sessionKey: "c" }).sessionKey).toBe("c");
    expect(sessionContext("oc", { sessionId: "sid" }, undefined).sessionKey).toBe("sid");
  });

  it("llm_input keeps the history messages hookbus's schema accepts (a role or a type)", () => {
    const event = llmInputEvent({
      runId: "r",
      sessionId: "s",
      provider: "fake",
      model: "m",
      prompt: "hi",
      historyMessages: [
        { role: "user", content: "a" },
        { type: "function_call" },
        "junk",
        { content: "no role" },
      ],
      imagesCount: 0,
    });
    expect(event.messages).toEqual([{ role: "user", content: "a" }, { type: "function_call" }]);
  });
});

describe("hookbus's decisions as OpenClaw's answers", () => {
  it("before_tool_call: a block, a params rewrite, or no opinion", () => {
    expect(
      answerToolCall({ command: "ls" }, { ...decided, outcome: "block", blockReason: "no" }),
    ).toEqual({
      block: true,
      blockReason: "no",
    });
    expect(
      answerToolCall(
        { path: "/etc/x" },
        { ...decided, outcome: "modify", params: { path: "/tmp/x" } },
      ),
    ).toEqual({
      params: { path: "/tmp/x" },
    });
    expect(answerToolCall({ path: "/etc/x" }, { ...decided, outcome: "allow" })).toBeUndefined();
  });

  it("before_agent_reply: a policy's reply answers; a block answers with its reason", () => {
    expect(
      answerAgentReply({ ...decided, outcome: "modify", reply: { text: "hi" }, reason: "canned" }),
    ).toEqual({
      handled: true,
      reply: { text: "hi" },
      reason: "canned",
    });
    expect(
      answerAgentReply({ ...decided, outcome: "block", blockReason: "not today" }),
    ).toMatchObject({
      handled: true,
      reply: { text: "not today" },
    });
    expect(answerAgentReply({ ...decided, outcome: "allow" })).toBeUndefined();
  });

  it("before_tool_result: a replacement as text parts; a block withholds the result", () => {
    expect(
      answerToolResult({
        ...decided,
        outcome: "modify",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      })?.result.content,
    ).toEqual([{ type: "text", text: "ab" }]);
    expect(
      answerToolResult({ ...decided, outcome: "block", blockReason: "pii" })?.result.content[0]
        ?.text,
    ).toBe("the tool's result was withheld: pii");
    expect(answerToolResult({ ...decided, outcome: "allow" })).toBeUndefined();
  });

  it("message_sending: rewritten text, or a cancel for a block, an empty text, or allContent: []", () => {
    expect(
      answerMessageSending("a@b.co", { ...decided, outcome: "modify", content: "[email]" }),
    ).toEqual({
      content: "[email]",
    });
    expect(answerMessageSending("x", { ...decided, outcome: "block", blockReason: "no" })).toEqual({
      cancel: true,
      cancelReason: "no",
    });
    expect(
      answerMessageSending("x", { ...decided, outcome: "modify", allContent: [] })?.cancel,
    ).toBe(true);
    expect(answerMessageSending("x", { ...decided, outcome: "modify", allContent: ["y"] })).toEqual(
      { content: "y" },
    );
    expect(answerMessageSending("x", { ...decided, outcome: "allow" })).toBeUndefined();
  });

  it("when hookbus cannot decide, every gate fails closed and says why with the code", () => {
    const refused = failToolCall(down);
    expect(refused.block).toBe(true);
    expect(refused.blockReason).toMatch(/HOOKBUS_COORDINATOR_UNAVAILABLE.*fail closed/);
    expect(failMessageSending(down).cancel).toBe(true);
    expect(failAgentReply(down)).toMatchObject({ handled: true });
    expect(failToolResult(down).result.content[0]?.text).toMatch(
      /HOOKBUS_COORDINATOR_UNAVAILABLE.*withheld/,
    );
  });
});
