/**
 * What the adapters' streaming-window tests share (ai-sdk, openai-agents and pi *-windows): a
 * numbered 1,000-token answer, a bus policy registered `stream: true` that blocks the window
 * holding the 500th token, the registry that registers a policy so, and the checks that the
 * answer shown was cut there and that the log's end record says so.
 */
import { expect } from "vitest";
import { definePolicy, type DecisionRecord, type Policy } from "../../src/index.js";
import type { RegistryDocumentInput } from "../../src/registry/document.js";

/** Token i of the scripted answer: numbered, so the 500th is known wherever a window ends. */
export const token = (i: number) => `w${i} `;
export const TOKENS = Array.from({ length: 1000 }, (_, i) => token(i + 1));

/** What the block of stopAt500 shows in place of the rest of the answer. */
export const CUT_SHOWN = "[the answer went too far]";

export const stopAt500 = definePolicy({
  name: "stop-at-500",
  hooks: {
    before_response_emit: (event) =>
      event.stream?.window !== undefined && event.content.includes(token(500))
        ? { block: true, blockReason: "the answer went too far" }
        : undefined,
  },
});

/** The registry and policies of a pipeline with `policy` alone, asked window by window. */
export function streamingPolicy(policy: Policy): {
  registry: RegistryDocumentInput;
  policies: Policy[];
} {
  return {
    registry: {
      policies: [
        { name: policy.name, hooks: ["before_response_emit"], priority: 100, stream: true },
      ],
    },
    policies: [policy],
  };
}

/** The window a before_response_emit record decided; undefined for the answer's end. */
export function windowOf(record: DecisionRecord): number | undefined {
  return (record.event as { stream?: { window?: number } }).stream?.window;
}

/**
 * The answer's one end record among `emits` (a run's before_response_emit records), checked to
 * record `shown` as what the user was shown.
 */
export function expectOneAnswerEnd(emits: DecisionRecord[], shown: string): DecisionRecord {
  const end = emits.filter((r) => windowOf(r) === undefined);
  expect(end).toHaveLength(1);
  expect((end[0]!.event as { stream: { shown: string } }).stream.shown).toBe(shown);
  return end[0]!;
}

/** `text` holds none of the answer's tokens from the 500th on (where stopAt500 cut it). */
export function expectNothingFrom500(text: string): void {
  for (let i = 500; i <= 1000; i++) expect(text).not.toContain(token(i));
}

/**
 * `shown` is the answer up to before the 500th token, then the block's reason, nothing after.
 * Returns what was shown of the answer (without the reason).
 */
export function expectCutAt500(shown: string): string {
  expectNothingFrom500(shown);
  expect(shown.endsWith(CUT_SHOWN)).toBe(true);
  const before = shown.slice(0, -CUT_SHOWN.length);
  expect(TOKENS.join("").startsWith(before)).toBe(true);
  expect(before.length).toBeGreaterThan(token(400).length * 400);
  return before;
}
