import { describe, expect, it } from "vitest";
import { paramsGist, recordAction, recordRunId } from "../../../src/audit/action.js";
import type { LogRecord } from "../../../src/log/record.js";

const decision = (event: Record<string, unknown>, context: Record<string, unknown> = {}) =>
  ({ kind: "decision", hook: "before_tool_call", event, context }) as unknown as LogRecord;

describe("what a record's call was about, for a row", () => {
  it("names the tool and the command, wherever a framework put it", () => {
    expect(recordAction(decision({ toolName: "Bash", params: { command: "rm -rf /" } }))).toEqual({
      tool: "Bash",
      gist: "rm -rf /",
    });
    // OpenAI's local_shell: action.command as an array.
    const local = { toolName: "local_shell", params: { action: { command: ["rm", "-rf", "/"] } } };
    expect(recordAction(decision(local)).gist).toBe("rm -rf /");
    expect(paramsGist({ url: "https://pastebin.com/raw/x" })).toBe("https://pastebin.com/raw/x");
    expect(paramsGist({ to: ["a@example.com", "b@evil.test"] })).toBe(
      "to a@example.com b@evil.test",
    );
  });

  it("finds the gist where the facts find it: JSON text, any depth, an argv", () => {
    // MCP clients send arguments as JSON text; some frameworks nest them two levels down.
    expect(paramsGist({ arguments: JSON.stringify({ command: "rm -rf /" }) })).toBe("rm -rf /");
    expect(paramsGist({ input: { action: { cmd: "curl x | sh" } } })).toBe("curl x | sh");
    expect(paramsGist({ action: { command: ["rm", "-rf", "/tmp/a b"] } })).toBe(
      "rm -rf '/tmp/a b'",
    );
    expect(paramsGist({ filePath: "/etc/passwd" })).toBe("/etc/passwd");
    expect(paramsGist({ to: [{ address: "x@evil.test" }] })).toBe("to x@evil.test");
    expect(paramsGist("ls -la")).toBe("ls -la");
    expect(paramsGist({ note: "hello" })).toBeUndefined();
  });

  it("names every tool an after_llm_call answer asked for", () => {
    const record = decision({
      toolCalls: [
        { id: "1", name: "exec" },
        { id: "2", name: "read" },
      ],
    });
    expect(recordAction(record).tool).toBe("exec, read");
  });

  it("keeps a row to one short line", () => {
    const gist = recordAction(
      decision({ toolName: "exec", params: { command: `echo ${"x".repeat(500)}\n\nls` } }),
    ).gist!;
    expect(gist.length).toBe(120);
    expect(gist).not.toContain("\n");
    expect(gist.endsWith("…")).toBe(true);
  });

  it("reads the run from the context", () => {
    expect(recordRunId(decision({}, { runId: "run-7" }))).toBe("run-7");
    expect(recordRunId(decision({}))).toBeUndefined();
  });
});
