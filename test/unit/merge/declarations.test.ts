/**
 * The merge table and the verdict schemas describe the same fields: every field a verdict may
 * carry is owned by exactly one rule of its hook, and no rule owns a field the schema does not
 * allow. So a new verdict field can never validate and then be silently dropped by the merge.
 */
import { describe, expect, it } from "vitest";
import { MODIFYING_HOOK_NAMES, modifyingHooks } from "../../../src/catalog/catalog.js";
import { mergeDeclarations } from "../../../src/merge/declarations.js";

/**
 * A policy that fails closed contributes `{ block, blockReason }` (src/merge/evaluate.ts) on
 * every hook, even where verdicts cannot block (before_agent_reply): the block latch owns them.
 */
const FAILURE_FIELDS = ["block", "blockReason"];

function verdictFields(hook: (typeof MODIFYING_HOOK_NAMES)[number]): string[] {
  const schema = modifyingHooks[hook].verdict as unknown as { shape: Record<string, unknown> };
  return Object.keys(schema.shape).sort();
}

describe("merge table ↔ verdict schemas", () => {
  it("declares a merge for every modifying hook and no other", () => {
    expect(Object.keys(mergeDeclarations).sort()).toEqual([...MODIFYING_HOOK_NAMES].sort());
  });

  for (const hook of MODIFYING_HOOK_NAMES) {
    it(`${hook}: every verdict field is owned by exactly one rule`, () => {
      const owned = mergeDeclarations[hook].rules.flatMap((rule) => [...rule.fields]);
      const duplicates = owned.filter((field, i) => owned.indexOf(field) !== i);
      expect(duplicates, "fields owned by more than one rule").toEqual([]);
      const allowed = [...new Set([...verdictFields(hook), ...FAILURE_FIELDS])].sort();
      expect(owned.sort()).toEqual(allowed);
      for (const field of verdictFields(hook)) expect(owned).toContain(field);
    });
  }
});
