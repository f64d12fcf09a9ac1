/**
 * no-shell: blocks destructive shell commands, whatever the framework calls its shell tool.
 * Edit the lists to your agent's tools; `npx hookbus policy test policies.policy-test.json`
 * checks the cases in that file after each change.
 */
import { definePolicy } from "hookbus";

/** Shell tools as frameworks name them (OpenClaw, Claude Code, the examples of the AI SDK, ...). */
const SHELL_TOOLS = new Set(["exec", "bash", "Bash", "shell", "run_command", "terminal"]);

/** What no agent may run without a person: deleting trees, piping downloads into a shell, ... */
const DESTRUCTIVE = [
  /\brm\s+-[a-z]*r[a-z]*f|\brm\s+-[a-z]*f[a-z]*r/i,
  /\b(curl|wget)\b[^|]*\|\s*(ba|z)?sh\b/i,
  /\bmkfs(\.\w+)?\b/i,
  /\bdd\s+if=/i,
  /:\(\)\s*\{\s*:\|:&\s*\};:/,
];

/** Every string in a tool's params (the command may be `command`, `cmd`, `argv`, ...). */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return [value.map(String).join(" "), ...value.flatMap(strings)];
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

export const noShell = definePolicy({
  name: "no-shell",
  version: "1.0.0",
  hooks: {
    before_tool_call(event) {
      if (!SHELL_TOOLS.has(event.toolName)) return undefined; // no opinion
      const text = strings(event.params).join("\n");
      const rule = DESTRUCTIVE.find((pattern) => pattern.test(text));
      if (rule === undefined) return undefined;
      return { block: true, blockReason: `destructive shell command refused (${rule.source})` };
    },
  },
});
