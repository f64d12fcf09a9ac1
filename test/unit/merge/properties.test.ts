/**
 * Properties of the merge rules over generated outcome lists, for every modifying hook.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  mergeOutcomes,
  modifyingHooks,
  toolCallId,
  toolDefinitionName,
  type MergeResult,
  type ModifyingHookName,
  type PolicyOutcomeInput,
  type ToolCall,
  type ToolDefinition,
} from "../../../src/index.js";

type Decision = Record<string, unknown> & { outcome: string; decidedBy: Record<string, string[]> };
type Event = Record<string, unknown>;

// ---------------------------------------------------------------- generators

const text = fc.constantFrom("", "a", "b", "[redacted]", "sk-123", "sk-123 again");
// Blocks are kept rare so that most generated lists reach the field rules.
const blockFields = {
  block: fc.constantFrom(false, false, false, true),
  blockReason: fc.constantFrom("r1", "r2", ""),
};

const toolPool: ToolDefinition[] = [
  { name: "read", description: "Read" },
  { name: "write" },
  { type: "function", function: { name: "exec", description: "Shell" } },
  { name: "search", description: "Web" },
];
const callPool: ToolCall[] = [
  { id: "c1", name: "read", arguments: { path: "a" } },
  { id: "c2", type: "function", function: { name: "exec", arguments: "{}" } },
  { id: "c3", name: "write" },
  { name: "search" },
  { id: "", name: "read" },
];

const message = fc.record({ role: fc.constantFrom("user", "assistant"), content: text });

interface HookSpec {
  hook: ModifyingHookName;
  event: fc.Arbitrary<Event>;
  /** Verdicts the hook accepts (invalid ones are mixed in by `verdictOf`). */
  valid: fc.Arbitrary<Record<string, unknown>>;
  /** First-writer fields (the cross-lock pair is handled separately). */
  firstWriter: string[];
}

const specs: HookSpec[] = [
  {
    hook: "before_agent_reply",
    event: fc.record({ cleanedBody: text }),
    valid: fc.record({ reply: fc.record({ text }), reason: text }, { requiredKeys: [] }),
    firstWriter: ["reply"],
  },
  {
    hook: "before_llm_call",
    event: fc.record(
      {
        messages: fc.array(message, { maxLength: 2 }),
        systemPrompt: text,
        tools: fc.subarray(toolPool),
      },
      { requiredKeys: ["messages"] },
    ),
    valid: fc.record(
      {
        messages: fc.array(message, { maxLength: 2 }),
        systemPrompt: text,
        tools: fc.array(
          fc.oneof(
            fc.constantFrom(...toolPool),
            fc.record({ name: fc.constantFrom("read", "exec", "evil") }),
          ),
          { maxLength: 4 },
        ),
        ...blockFields,
      },
      { requiredKeys: [] },
    ),
    firstWriter: ["messages", "systemPrompt"],
  },
  {
    hook: "after_llm_call",
    event: fc.record({ toolCalls: fc.subarray(callPool) }),
    valid: fc.record(
      {
        toolCalls: fc.array(
          fc.record({ id: fc.constantFrom("c1", "c2", "c3", "c9", "") }, { requiredKeys: [] }),
          { maxLength: 4 },
        ),
        ...blockFields,
      },
      { requiredKeys: [] },
    ),
    firstWriter: [],
  },
  {
    hook: "before_tool_call",
    event: fc.record({
      toolName: fc.constantFrom("exec", "read"),
      params: fc.record({ cmd: text }),
    }),
    valid: fc.record(
      { params: fc.dictionary(fc.constantFrom("cmd", "path"), text), ...blockFields },
      { requiredKeys: [] },
    ),
    firstWriter: ["params"],
  },
  {
    hook: "before_tool_result",
    event: fc.record({
      toolName: fc.constant("read"),
      params: fc.constant({}),
      result: text,
      isError: fc.boolean(),
    }),
    valid: fc.record(
      {
        content: fc.oneof(
          text,
          fc.array(fc.record({ type: fc.constant("text"), text }), { maxLength: 2 }),
        ),
        ...blockFields,
      },
      { requiredKeys: [] },
    ),
    firstWriter: ["content"],
  },
  {
    hook: "before_response_emit",
    event: fc.record({ content: text, allContent: fc.array(text, { maxLength: 4 }) }),
    valid: fc.record(
      { content: text, allContent: fc.array(text, { maxLength: 6 }), ...blockFields },
      { requiredKeys: [] },
    ),
    firstWriter: [],
  },
];

function verdictOf(spec: HookSpec): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 12, arbitrary: spec.valid },
    { weight: 1, arbitrary: fc.constantFrom(null, undefined) },
    { weight: 1, arbitrary: fc.constantFrom({ bogus: 1 }, "allow", { block: "yes" }) },
  );
}

/** Policy names over an alphabet where code-unit and locale order disagree. */
const nameChars = fc.constantFrom("a", "b", "B", "Z", "é", "_", "1");
const policyName = fc.string({ unit: nameChars, minLength: 1, maxLength: 3 });

function outcomeArb(
  spec: HookSpec,
  name: fc.Arbitrary<string>,
  options: { priority?: fc.Arbitrary<number>; mode?: fc.Arbitrary<"enforce" | "shadow"> } = {},
): fc.Arbitrary<PolicyOutcomeInput> {
  return fc
    .record(
      {
        policy: name,
        priority: options.priority ?? fc.integer({ min: -3, max: 3 }),
        status: fc.oneof(
          { weight: 12, arbitrary: fc.constant("ok" as const) },
          { weight: 1, arbitrary: fc.constantFrom("error", "timeout", "invalid", "unavailable") },
        ),
        failMode: fc.constantFrom("fail-open", "fail-closed"),
        mode: options.mode ?? fc.constantFrom("enforce", "enforce", "enforce", "shadow"),
        verdict: verdictOf(spec),
      },
      {
        requiredKeys:
          options.mode === undefined
            ? ["policy", "priority", "status"]
            : ["policy", "priority", "status", "mode"],
      },
    )
    .map((o) => o as PolicyOutcomeInput);
}

function outcomesArb(
  spec: HookSpec,
  options: Parameters<typeof outcomeArb>[2] & {
    name?: fc.Arbitrary<string>;
    minLength?: number;
  } = {},
): fc.Arbitrary<PolicyOutcomeInput[]> {
  return fc.uniqueArray(outcomeArb(spec, options.name ?? policyName, options), {
    selector: (o) => o.policy,
    minLength: options.minLength ?? 0,
    maxLength: 6,
  });
}

// ---------------------------------------------------------------- oracle helpers

function merge(spec: HookSpec, event: Event, outcomes: PolicyOutcomeInput[]) {
  const result: MergeResult<ModifyingHookName> = mergeOutcomes(spec.hook, event as never, outcomes);
  const schema = modifyingHooks[spec.hook].decision as z.ZodType;
  expect(schema.safeParse(result.decision).error?.issues ?? []).toEqual([]);
  if (result.shadow)
    expect(schema.safeParse(result.shadow.decision).error?.issues ?? []).toEqual([]);
  return {
    ...result,
    decision: result.decision as Decision,
    shadowDecision: result.shadow?.decision as Decision | undefined,
  };
}

/** Merge order computed independently of the engine: priority desc, then code-unit name. */
function sorted(outcomes: readonly PolicyOutcomeInput[]): PolicyOutcomeInput[] {
  return [...outcomes].sort((a, b) =>
    a.priority !== b.priority
      ? b.priority - a.priority
      : a.policy < b.policy
        ? -1
        : a.policy > b.policy
          ? 1
          : 0,
  );
}

/** Enforced verdicts that pass validation, in merge order. */
function appliedVerdicts(spec: HookSpec, outcomes: readonly PolicyOutcomeInput[]) {
  const schema = modifyingHooks[spec.hook].verdict as z.ZodType;
  return sorted(outcomes).flatMap((o) => {
    if ((o.mode ?? "enforce") !== "enforce" || o.status !== "ok") return [];
    if (o.verdict === undefined || o.verdict === null) return [];
    const parsed = schema.safeParse(o.verdict);
    return parsed.success
      ? [{ policy: o.policy, verdict: parsed.data as Record<string, unknown> }]
      : [];
  });
}

function withPrefix(name: fc.Arbitrary<string>, prefix: string): fc.Arbitrary<string> {
  return name.map((n) => `${prefix}${n}`);
}

const hasAllowlist: Partial<Record<ModifyingHookName, "tools" | "toolCalls">> = {
  before_llm_call: "tools",
  after_llm_call: "toolCalls",
};

// ---------------------------------------------------------------- properties

describe.each(specs.map((spec) => [spec.hook, spec] as const))(
  "merge properties: %s",
  (_hook, spec) => {
    it("gives a decision that does not depend on the order outcomes arrive", () => {
      fc.assert(
        fc.property(
          spec.event,
          outcomesArb(spec).chain((outcomes) =>
            fc.tuple(
              fc.constant(outcomes),
              fc.shuffledSubarray(outcomes, {
                minLength: outcomes.length,
                maxLength: outcomes.length,
              }),
            ),
          ),
          (event, [outcomes, shuffled]) => {
            expect(merge(spec, event, shuffled)).toStrictEqual(merge(spec, event, outcomes));
          },
        ),
      );
    });

    it("never undoes a block: appending lower-priority outcomes keeps blockedBy and blockReason", () => {
      const blocker = fc.record({
        policy: withPrefix(policyName, "!"),
        priority: fc.integer({ min: -3, max: 3 }),
        status: fc.constantFrom("error", "timeout", "invalid", "unavailable"),
        failMode: fc.constant("fail-closed" as const),
      });
      fc.assert(
        fc.property(
          spec.event,
          outcomesArb(spec),
          blocker,
          fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 5 }),
          fc.array(outcomeArb(spec, withPrefix(policyName, "~")), { maxLength: 5 }),
          (event, base, block, offsets, later) => {
            const blocked = [...base, block as PolicyOutcomeInput];
            const before = merge(spec, event, blocked).decision;
            expect(before.outcome).toBe("block");
            const floor = Math.min(...blocked.map((o) => o.priority));
            const seen = new Set(blocked.map((o) => o.policy));
            const appended = later
              .filter((o) => !seen.has(o.policy) && (seen.add(o.policy), true))
              .map((o, i) => ({ ...o, priority: floor - (offsets[i] ?? 1) }));
            const after = merge(spec, event, [...blocked, ...appended]).decision;
            expect(after.outcome).toBe("block");
            expect(after.blockedBy).toBe(before.blockedBy);
            expect(after.blockReason).toBe(before.blockReason);
            expect(after).toStrictEqual(before);
          },
        ),
      );
    });

    it("keeps merged allowlists within the original and within every applied verdict's list", () => {
      const field = hasAllowlist[spec.hook];
      fc.assert(
        fc.property(spec.event, outcomesArb(spec), (event, outcomes) => {
          const { decision } = merge(spec, event, outcomes);
          if (field === undefined) {
            expect("tools" in decision || "toolCalls" in decision).toBe(false);
            return;
          }
          const merged = decision[field] as unknown[] | undefined;
          if (merged === undefined) return;
          const original = (event[field] ?? []) as unknown[];
          const keyOf = (entry: unknown) =>
            field === "tools"
              ? toolDefinitionName(entry as ToolDefinition)
              : toolCallId(entry as { id?: string });
          for (const entry of merged) {
            // the very same original entry: nothing added, no definition changed
            expect(original).toContain(entry);
            const key = keyOf(entry);
            expect(key).toBeDefined();
            for (const { verdict } of appliedVerdicts(spec, outcomes)) {
              const allowed = verdict[field] as unknown[] | undefined;
              if (allowed === undefined) continue;
              expect(allowed.map(keyOf)).toContain(key);
            }
          }
        }),
      );
    });

    it("never grows allContent beyond the original, and never keeps an original text the owner did not list", () => {
      fc.assert(
        fc.property(spec.event, outcomesArb(spec), (event, outcomes) => {
          const { decision, shadowDecision } = merge(spec, event, outcomes);
          for (const d of [decision, shadowDecision]) {
            const merged = d?.allContent as string[] | undefined;
            if (merged === undefined) continue;
            expect(merged.length).toBeLessThanOrEqual((event.allContent as string[]).length);
            const owner = appliedVerdicts(spec, outcomes).find(
              (a) => a.verdict.content !== undefined || a.verdict.allContent !== undefined,
            );
            if (d === decision && owner?.verdict.allContent !== undefined) {
              expect(merged.length).toBeLessThanOrEqual(
                (owner.verdict.allContent as string[]).length,
              );
            }
          }
        }),
      );
    });

    it("never lets a lower-priority policy override a field a higher one set", () => {
      fc.assert(
        fc.property(spec.event, outcomesArb(spec), (event, outcomes) => {
          const { decision } = merge(spec, event, outcomes);
          if (decision.outcome === "block") {
            expect(Object.keys(decision).sort()).toEqual([
              "blockReason",
              "blockedBy",
              "decidedBy",
              "outcome",
            ]);
            return;
          }
          const applied = appliedVerdicts(spec, outcomes);
          for (const field of spec.firstWriter) {
            const writer = applied.find((a) => a.verdict[field] !== undefined);
            expect(decision[field]).toEqual(writer?.verdict[field]);
            expect(decision.decidedBy[field]).toEqual(
              writer === undefined ? undefined : [writer.policy],
            );
            if (spec.hook === "before_agent_reply") {
              expect(decision.reason).toEqual(writer?.verdict.reason);
            }
          }
          if (spec.hook === "before_response_emit") {
            // cross-lock: the first policy to set either field owns both
            const owner = applied.find(
              (a) => a.verdict.content !== undefined || a.verdict.allContent !== undefined,
            );
            expect(decision.content).toEqual(owner?.verdict.content);
            const original = event.allContent as string[];
            const replacement = owner?.verdict.allContent as string[] | undefined;
            expect(decision.allContent).toEqual(
              replacement === undefined ? undefined : replacement.slice(0, original.length),
            );
          }
        }),
      );
    });

    it("never changes the enforced decision when shadow outcomes are added", () => {
      fc.assert(
        fc.property(
          spec.event,
          outcomesArb(spec),
          outcomesArb(spec, {
            name: withPrefix(policyName, "shadow-"),
            mode: fc.constant("shadow"),
            minLength: 1,
          }),
          (event, enforced, shadows) => {
            const without = merge(spec, event, enforced);
            const withShadows = merge(spec, event, [...shadows, ...enforced]);
            expect(withShadows.decision).toStrictEqual(without.decision);
            expect(withShadows.shadow).toBeDefined();
          },
        ),
      );
    });
  },
);
