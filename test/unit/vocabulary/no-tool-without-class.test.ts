/**
 * Issue 30, item 3: no tool without a class. A tool's own words, its MCP server's name and its
 * MCP annotations feed the class; what nothing knows is `unknown` (not `other`); a stop of a bare
 * tool name holds for the MCP spelling of it and back.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StopList, stopNamesTool, type Stop } from "../../../src/registry/stops.js";
import { TOOL_CLASSES, toolClassOf, toolVocabulary } from "../../../src/vocabulary/index.js";
import { nameWords } from "../../../src/vocabulary/words.js";

describe("a class from the words of a name", () => {
  it.each([
    ["mcp__desktop-commander__start_process", "shell"],
    ["mcp__desktop-commander__execute_command", "shell"],
    ["mcp__shell__run", "shell"],
    ["mcp__web__download", "web-fetch"],
    ["mcp__gmail__list_labels", "send-message"],
    ["mcp__files__deleteFile", "file-write"],
    ["mcp__files__get_file_contents", "file-read"],
    ["mcp__search__web_search_query", "web-search"],
    ["mcp__pw__take_screenshot", "browser"],
    ["mcp__crew__spawn_agent", "sub-agent"],
    ["runShellCommand", "shell"],
    ["send_invoice", "send-message"],
    ["SCRAPE-PAGE", "web-fetch"],
  ])("%s is %s", (name, expected) => {
    expect(toolClassOf(name)).toBe(expected);
  });

  it("prefers the class more rules watch when words of two classes meet", () => {
    // send (send-message) and file (a file noun): sending wins over any file class.
    expect(toolClassOf("send_file")).toBe("send-message");
    // exec beats fetch: a tool that runs what it downloads is a shell.
    expect(toolClassOf("fetch_and_exec")).toBe("shell");
  });

  it("reads the tool's own words before its server's", () => {
    // The server says mail, the tool says it runs a process: the tool's words win.
    expect(toolClassOf("mcp__mail__spawn_process")).toBe("shell");
    expect(toolVocabulary.classify("run", { mcpServer: "shell" })).toEqual({
      name: "run",
      class: "shell",
      mcp: { server: "shell", tool: "run" },
    });
  });

  it("splits words at separators, digits and case changes only", () => {
    expect(nameWords("getFileV2_contents-now.x")).toEqual([
      "get",
      "file",
      "v",
      "contents",
      "now",
      "x",
    ]);
    // `process` inside a word is not the word: `preprocessor` says nothing.
    expect(toolClassOf("preprocessor")).toBe("unknown");
    expect(toolClassOf("mcp__github__delete_repo")).toBe("unknown");
  });

  it("never classifies a name from words a table already knows otherwise", () => {
    // Known names win over words: `read_file` stays a reader, `WebFetch` a fetch.
    expect(toolClassOf("read_file")).toBe("file-read");
    expect(toolClassOf("mcp__x__read_file")).toBe("file-read");
    expect(
      toolVocabulary.extend({ names: { exec_report: "other" } }).classify("exec_report").class,
    ).toBe("other");
  });

  it("gives every name some class of the table, and unknown to names without letters", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (name) => {
        expect(TOOL_CLASSES).toContain(toolClassOf(name));
      }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9_\-. ]{0,40}$/), (name) => {
        expect(toolClassOf(name)).toBe("unknown");
      }),
    );
  });
});

describe("MCP annotations", () => {
  it("use the title's words when the name says nothing", () => {
    const identity = toolVocabulary.classify("do_it", {
      mcpServer: "tools",
      annotations: { title: "Run a shell command" },
    });
    expect(identity.class).toBe("shell");
  });

  it("make a reader a writer when its server says it is not read-only", () => {
    const options = { mcpServer: "fs", annotations: { readOnlyHint: false } };
    expect(toolVocabulary.classify("read_text_file", options).class).toBe("file-write");
  });

  it("never make a class more lenient: readOnlyHint does not lift unknown or shell", () => {
    const hints = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };
    expect(toolVocabulary.classify("wire_money", { annotations: hints }).class).toBe("unknown");
    expect(toolVocabulary.classify("exec", { annotations: hints }).class).toBe("shell");
  });
});

describe("a stop of a tool name", () => {
  const stop = (name: string): Stop => ({
    kind: "tool",
    name,
    by: "alice",
    at: "2026-12-02T00:00:00.000Z",
    reason: "drill",
  });

  it("holds for the MCP spelling of a bare name, and the bare name of an MCP spelling", () => {
    const bare = new StopList(1, [stop("delete_repo")]);
    expect(bare.stopFor({ agentId: "a", toolName: "mcp__github__delete_repo" })).toBeDefined();
    expect(bare.stopFor({ agentId: "a", toolName: "mcp__gitlab__delete_repo" })).toBeDefined();
    const qualified = new StopList(1, [stop("mcp__github__delete_repo")]);
    expect(qualified.stopFor({ agentId: "a", toolName: "delete_repo" })).toBeDefined();
    expect(qualified.stopFor({ agentId: "a", toolName: "mcp__other__delete_repo" })).toBeDefined();
  });

  it("does not hold for another tool whose name merely contains it", () => {
    expect(stopNamesTool("delete_repo", "delete_repository")).toBe(false);
    expect(stopNamesTool("delete_repo", "mcp__github__delete_repo_safely")).toBe(false);
    expect(stopNamesTool("repo", "mcp__delete__repo_x")).toBe(false);
    const list = new StopList(1, [stop("delete_repo")]);
    expect(list.stopFor({ agentId: "a", toolName: "create_repo" })).toBeUndefined();
  });

  it("is symmetric in its two spellings", () => {
    const part = fc.stringMatching(/^[a-z]{1,6}(_[a-z]{1,6}){0,2}$/);
    fc.assert(
      fc.property(part, part, (server, tool) => {
        const mcp = `mcp__${server}__${tool}`;
        expect(stopNamesTool(tool, mcp)).toBe(true);
        expect(stopNamesTool(mcp, tool)).toBe(true);
      }),
    );
  });

  it("stops an unknown tool by class:unknown", () => {
    const list = new StopList(1, [stop("class:unknown")]);
    expect(list.stopFor({ agentId: "a", toolName: "wire_money" })).toBeDefined();
    expect(list.stopFor({ agentId: "a", toolName: "Read" })).toBeUndefined();
  });
});

describe("classing a whole MCP server in the registry", () => {
  it("a prefix classes every tool of a server, an exact name still wins", () => {
    const mine = toolVocabulary.extend({
      names: { mcp__github__delete_repo: "unknown" },
      prefixes: { mcp__github__: "other" },
    });
    expect(mine.classify("mcp__github__create_pull_request").class).toBe("other");
    expect(mine.classify("mcp__github__delete_repo").class).toBe("unknown");
    // Known bare names are exact names: a server's prefix does not shadow them.
    expect(mine.classify("mcp__github__read_file").class).toBe("file-read");
    expect(mine.classify("mcp__github__send_email").class).toBe("send-message");
  });
});
