/**
 * Replay in a policy author's test suite (docs/replay.md): the sessions recorded with the policy
 * set in force (test/fixtures/sessions.ndjson, an `hookbus audit export`), replayed with
 * `no-shell` in place of `shell-guard`: only exec calls change (blocked now, or blocked for
 * another reason).
 *   npx vitest run examples/replay-policy.test.ts
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readExport, replay, summarizeReplay, type ReplayResult } from "hookbus/replay";
import * as recordedWith from "../test/fixtures/policies/index.js";
import recorded from "../test/fixtures/registry.json" with { type: "json" };
import { noShell } from "./no-shell-policy.js";

// The registry in force, with no-shell where shell-guard was.
const registry = {
  policies: recorded.policies.map((p) =>
    p.name === "shell-guard" ? { ...p, name: "no-shell" } : p,
  ),
};
const policies = [...Object.values(recordedWith).filter((p) => p.name !== "shell-guard"), noShell];

describe("no-shell 1.0.0 instead of shell-guard", () => {
  it("changes only the exec calls of the recorded sessions", async () => {
    const results: ReplayResult[] = [];
    for await (const result of replay({
      records: readExport(
        fileURLToPath(new URL("../test/fixtures/sessions.ndjson", import.meta.url)),
      ),
      policies,
      registry,
    }))
      results.push(result);

    expect(results.filter((r) => r.status === "changed").map((r) => r.summary)).toEqual([
      "before_tool_call exec: allow → block by `no-shell`",
      'before_tool_call exec: blocked by `shell-guard` → `no-shell`, block reason "destructive shell command" → "shell access is not allowed"',
      "before_tool_call exec: allow → block by `no-shell`",
    ]);
    expect(summarizeReplay(results).byHook.before_tool_call).toEqual({ records: 8, changed: 3 });
  });
});
