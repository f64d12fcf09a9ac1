/**
 * no-shell: blocks destructive shell commands, whatever the framework calls its shell tool.
 * Edit the lists to your agent's tools; `npx hookbus policy test policies.policy-test.json`
 * checks the cases in that file after each change.
 */
import { definePolicy, toolClassOf } from "hookbus";

/**
 * What no agent may run without a person, each with the name its refusal gives: deleting trees,
 * piping downloads into a shell, ...
 */
const DESTRUCTIVE: [name: string, pattern: RegExp][] = [
  ["rm -rf", /\brm\s+-[a-z]*r[a-z]*f|\brm\s+-[a-z]*f[a-z]*r/i],
  ["a download piped into a shell", /\b(curl|wget)\b[^|]*\|\s*(ba|z)?sh\b/i],
  ["mkfs", /\bmkfs(\.\w+)?\b/i],
  ["dd", /\bdd\s+if=/i],
  ["a fork bomb", /:\(\)\s*\{\s*:\|:&\s*\};:/],
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
      // Shell tools as any framework names them: exec, Bash, run_command, ... (docs/vocabulary.md).
      if (toolClassOf(event.toolName) !== "shell") return undefined; // no opinion
      const text = strings(event.params).join("\n");
      const rule = DESTRUCTIVE.find(([, pattern]) => pattern.test(text));
      if (rule === undefined) return undefined;
      return { block: true, blockReason: `destructive shell command refused: ${rule[0]}` };
    },
  },
});
