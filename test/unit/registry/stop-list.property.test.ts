/**
 * StopList.stopFor looks stops up in an index (issue 32, item 5: agents consult it per call on
 * their fast path). Whatever the list, it must stop exactly the calls that some stop matches, read
 * one by one (the reference below), and name a stop that does match; an agent stop first.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StopList, stopNamesTool, type Stop } from "../../../src/registry/stops.js";
import { TOOL_CLASSES } from "../../../src/vocabulary/classes.js";
import { toolVocabulary } from "../../../src/vocabulary/vocabulary.js";

const AGENTS = ["a1", "a2", "a3"];
/** Tools of several classes, and one the vocabulary does not know. */
const TOOLS = [
  "Bash",
  "exec",
  "Write",
  "read_file",
  "WebFetch",
  "wire_money",
  "mcp__x__y",
  // One tool under both MCP spellings: a stop of either stops both (stopNamesTool).
  "delete_repo",
  "mcp__github__delete_repo",
];

const stopArb: fc.Arbitrary<Stop> = fc
  .oneof(
    fc.record({ kind: fc.constant("agent" as const), name: fc.constantFrom(...AGENTS) }),
    fc.record({ kind: fc.constant("tool" as const), name: fc.constantFrom(...TOOLS) }),
    fc.record({
      kind: fc.constant("tool" as const),
      name: fc.constantFrom(...TOOL_CLASSES.map((c) => `class:${c}`)),
    }),
  )
  .map((s) => ({ ...s, by: "ops", at: "2026-12-02T00:00:00.000Z", reason: "" }));

/** Whether `stop` matches the call, read on its own. */
function matches(stop: Stop, agentId: string, toolName: string | undefined): boolean {
  if (stop.kind === "agent") return stop.name === agentId;
  if (toolName === undefined) return false;
  if (stopNamesTool(stop.name, toolName)) return true;
  return stop.name === `class:${toolVocabulary.classify(toolName).class}`;
}

describe("StopList.stopFor", () => {
  it("stops exactly the calls some stop matches, names a matching one, an agent stop first", () => {
    fc.assert(
      fc.property(
        fc.array(stopArb, { maxLength: 12 }),
        fc.constantFrom(...AGENTS),
        fc.option(fc.constantFrom(...TOOLS), { nil: undefined }),
        (stops, agentId, toolName) => {
          const found = new StopList(1, stops).stopFor({ agentId, toolName });
          const any = stops.some((s) => matches(s, agentId, toolName));
          expect(found !== undefined).toBe(any);
          if (found === undefined) return;
          expect(matches(found, agentId, toolName)).toBe(true);
          const agentStopped = stops.some((s) => s.kind === "agent" && s.name === agentId);
          expect(found.kind === "agent").toBe(agentStopped);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
