/** Tool patterns that name a vocabulary class hold under every framework's tool names. */
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/index.js";
import { ToolRules } from "../../../services/policies/index.js";
import { toolMatcher } from "../../../services/policies/shared.js";

describe("class: tool patterns", () => {
  it("match a class under OpenClaw, Claude Code, SDK and MCP names, and nothing else", () => {
    const shell = toolMatcher("p", "deny", ["class:shell"]);
    for (const name of ["exec", "Bash", "run_command", "mcp__box__run_command"])
      expect(shell.match(name), name).toBe("class:shell");
    for (const name of ["Read", "send_email", "history_viewer"])
      expect(shell.match(name), name).toBeUndefined();
    // A name nothing lists is classed by its words (issue 30: no tool without a class), and a
    // shell word makes it a shell tool: stricter, never milder.
    expect(shell.match("bash_history_viewer")).toBe("class:shell");
    const send = toolMatcher("p", "sinks", ["class:send-message"]);
    expect(send.match("mcp__mail__send_email")).toBe("class:send-message");
  });

  it("refuse an unknown class at start-up with a coded error", () => {
    let error: unknown;
    try {
      toolMatcher("p", "deny", ["class:shel"]);
    } catch (e) {
      error = e;
    }
    expect(isHookbusError(error) && error.code).toBe("HOOKBUS_INVALID_POLICY");
    expect((error as Error).message).toContain('"shel" is not a tool class');
  });

  it("let one argument rule cover every shell's spelling of its command", () => {
    const rules = new ToolRules("p", {
      argRules: [{ tool: "class:shell", denyIfMatches: /rm -rf \//, reason: "no" }],
    });
    expect(rules.judgeCall("Bash", { command: "rm -rf /" }).permitted).toBe(false);
    expect(rules.judgeCall("exec", { cmd: "rm -rf /" }).permitted).toBe(false);
    expect(rules.judgeCall("Bash", { command: "ls" }).permitted).toBe(true);
    expect(rules.judgeCall("Read", { file_path: "rm -rf /" }).permitted).toBe(true);
  });
});
