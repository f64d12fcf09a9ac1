import { describe, expect, it } from "vitest";
import {
  KNOWN_TOOL_NAMES,
  TOOL_CLASSES,
  mcpToolName,
  parseMcpToolName,
  toolClassOf,
  toolFacts,
  toolVocabulary,
} from "../../../src/vocabulary/index.js";
import { isHookbusError } from "../../../src/foundation/errors.js";

describe("the tool vocabulary", () => {
  it("gives every known name one class, whatever its case", () => {
    const seen = new Map<string, string>();
    for (const [name, toolClass] of KNOWN_TOOL_NAMES) {
      const key = name.toLowerCase();
      const before = seen.get(key);
      if (before !== undefined) expect(`${name}: ${toolClass}`).toBe(`${name}: ${before}`);
      seen.set(key, toolClass);
      expect(TOOL_CLASSES).toContain(toolClass);
    }
  });

  it.each([
    // OpenClaw
    ["exec", "shell"],
    ["read", "file-read"],
    ["apply_patch", "file-write"],
    ["web_fetch", "web-fetch"],
    ["web_search", "web-search"],
    ["message", "send-message"],
    ["sessions_spawn", "sub-agent"],
    // Claude Code
    ["Bash", "shell"],
    ["Read", "file-read"],
    ["Edit", "file-write"],
    ["WebFetch", "web-fetch"],
    ["WebSearch", "web-search"],
    ["Task", "sub-agent"],
    // AI SDK / OpenAI Agents SDK
    ["shell", "shell"],
    ["local_shell", "shell"],
    ["computer_use_preview", "browser"],
    ["transfer_to_billing_agent", "sub-agent"],
    ["send_email", "send-message"],
    // MCP reference servers
    ["read_text_file", "file-read"],
    ["browser_navigate", "browser"],
  ])("classifies %s as %s", (name, toolClass) => {
    expect(toolClassOf(name)).toBe(toolClass);
  });

  it("classifies an MCP tool by its bare name and keeps its server", () => {
    expect(toolVocabulary.classify("mcp__mail__send_email")).toEqual({
      name: "mcp__mail__send_email",
      class: "send-message",
      mcp: { server: "mail", tool: "send_email" },
    });
    expect(toolVocabulary.classify("read_text_file", { mcpServer: "fs" })).toEqual({
      name: "read_text_file",
      class: "file-read",
      mcp: { server: "fs", tool: "read_text_file" },
    });
    expect(toolVocabulary.classify("mcp__github__create_issue").class).toBe("unknown");
  });

  it("treats a tool nothing knows as unknown, never as a known class or `other`", () => {
    expect(toolClassOf("deploy_to_production")).toBe("unknown");
    expect(toolClassOf("")).toBe("unknown");
    expect(toolClassOf("mcp__github__delete_repo")).toBe("unknown");
    expect(toolClassOf("x".repeat(10_000))).toBe("unknown");
  });

  it("parses only well-formed MCP names", () => {
    expect(parseMcpToolName("mcp__fs__read")).toEqual({ server: "fs", tool: "read" });
    expect(parseMcpToolName("mcp__a__b__c")).toEqual({ server: "a", tool: "b__c" });
    expect(parseMcpToolName("mcp__fs")).toBeUndefined();
    expect(parseMcpToolName("mcp____read")).toBeUndefined();
    expect(parseMcpToolName("mcp__fs__")).toBeUndefined();
    expect(parseMcpToolName("fs__read")).toBeUndefined();
    expect(parseMcpToolName(mcpToolName("srv", "t"))).toEqual({ server: "srv", tool: "t" });
  });

  it("extends with an app's own names, which win over the shipped ones", () => {
    const mine = toolVocabulary.extend({
      names: { deploy: "shell", fetch: "other" },
      prefixes: { notify_: "send-message" },
    });
    expect(mine.classify("deploy").class).toBe("shell");
    expect(mine.classify("fetch").class).toBe("other");
    expect(mine.classify("notify_oncall").class).toBe("send-message");
    expect(toolVocabulary.classify("deploy").class).toBe("unknown");
  });

  it("refuses an extension with an unknown class, with a coded error", () => {
    let caught: unknown;
    try {
      toolVocabulary.extend({ names: { x: "nuke" as never } });
    } catch (error) {
      caught = error;
    }
    expect(isHookbusError(caught) && caught.code).toBe("HOOKBUS_INVALID_ARGUMENT");
  });
});

describe("tool facts", () => {
  it("reads the shell command whatever the framework calls it", () => {
    expect(toolFacts("Bash", { command: "rm -rf /" }).command).toBe("rm -rf /");
    expect(toolFacts("exec", { cmd: "ls" }).command).toBe("ls");
    expect(toolFacts("local_shell", { command: ["rm", "-rf", "/"] }).command).toBe("rm -rf /");
    expect(toolFacts("shell", { commands: ["ls -la", "pwd"] }).command).toBe("ls -la pwd");
  });

  it("parses the URL of a fetch, lower-casing scheme and host", () => {
    expect(toolFacts("WebFetch", { url: "HTTP://Example.COM:8080/a?b=1" }).url).toEqual({
      href: "http://example.com:8080/a?b=1",
      scheme: "http",
      host: "example.com",
    });
    expect(toolFacts("web_fetch", { url: "not a url" }).url).toBeUndefined();
  });

  it("collects paths and recipients from every spelling, and ignores values of the wrong type", () => {
    const facts = toolFacts("mcp__mail__send_email", { to: ["a@x.org"], cc: "b@x.org", path: 3 });
    expect(facts.recipients).toEqual(["a@x.org", "b@x.org"]);
    expect(facts.paths).toEqual([]);
    expect(toolFacts("Write", { file_path: "/etc/passwd" }).paths).toEqual(["/etc/passwd"]);
    expect(toolFacts("Write", "not an object").paths).toEqual([]);
  });
});
