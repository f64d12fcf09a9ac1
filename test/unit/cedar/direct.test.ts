/**
 * The TypeScript answers of src/cedar/direct.ts against the engine's: generated policies over a
 * context whose attributes are present, missing or of the wrong type, and every answer the module
 * gives must be the engine's (an error in the engine must never be a TypeScript answer).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCedarPolicySet } from "../../../src/cedar/index.js";
import { directAnswer } from "../../../src/cedar/direct.js";
import { cedarWasm } from "../../../src/cedar/wasm.js";

const WORDS = ["", "x", "ab", "xaby", "a", "y", "shell", "gh"];

const leaf = fc.constantFrom(
  "context.b",
  "context has a",
  "context has rec.x",
  "context.rec has x",
  'resource.class == "shell"',
  "resource.class == context.s",
  'resource.class != "shell"',
  "context.a > 2",
  "context.a <= context.rec.y",
  'context.a == "1"',
  "context.s == 1",
  'context.s like "*ab*"',
  'context.s like "a*"',
  'context.s like "*y"',
  'context.s like "x*a*y"',
  'context.set.contains("x")',
  "context.set.contains(context.s)",
  'context.set.containsAny(["x", "y"])',
  'context.set.containsAll(["x"])',
  'context.s.contains("x")',
  'context.rec == {"x": "a"}',
  'context.set == ["x"]',
  "resource is Tool",
  'resource == Tool::"t1"',
  "resource has server",
  'resource.server == "gh"',
  'principal == Agent::"a1"',
  'action == Action::"before_tool_call"',
  "context.a + 1 > 2",
  'principal in Agent::"a1"',
  'context.rec.x like "a"',
  "context.nested.deep.flag",
  "context has nested.deep.flag",
  "context.rec.y >= -1",
);

const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    tie("e").map((e) => `!(${e})`),
    fc.tuple(tie("e"), tie("e")).map(([a, b]) => `(${a} && ${b})`),
    fc.tuple(tie("e"), tie("e")).map(([a, b]) => `(${a} || ${b})`),
    fc.tuple(tie("e"), tie("e"), tie("e")).map(([a, b, c]) => `(if ${a} then ${b} else ${c})`),
  ),
})).e;

const policy = fc
  .record({
    effect: fc.constantFrom("forbid", "permit"),
    principal: fc.constantFrom("principal", 'principal == Agent::"a1"', "principal is Agent"),
    action: fc.constantFrom(
      "action",
      'action == Action::"before_tool_call"',
      'action in [Action::"after_llm_call", Action::"before_tool_call"]',
    ),
    resource: fc.constantFrom("resource", "resource is Tool", 'resource == Tool::"t1"'),
    conditions: fc.array(fc.tuple(fc.constantFrom("when", "unless"), expr), {
      minLength: 0,
      maxLength: 2,
    }),
  })
  .map(
    (p) =>
      `${p.effect} (${p.principal}, ${p.action}, ${p.resource}) ${p.conditions
        .map(([kind, body]) => `${kind} { ${body} }`)
        .join(" ")};`,
  );

const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof(arb, fc.constant(undefined), fc.constantFrom<unknown>("x", 3, true, ["x"]));

const context = fc
  .record({
    a: maybe(fc.integer({ min: -3, max: 5 })),
    s: maybe(fc.constantFrom(...WORDS)),
    b: maybe(fc.boolean()),
    set: maybe(fc.subarray(["x", "y", "ab"]).map((xs) => xs as unknown[])),
    rec: maybe(fc.record({ x: maybe(fc.constantFrom(...WORDS)), y: maybe(fc.integer()) })),
    nested: maybe(fc.record({ deep: maybe(fc.record({ flag: maybe(fc.boolean()) })) })),
  })
  .map((c) => JSON.parse(JSON.stringify(c)) as Record<string, unknown>);

const request = fc.record({
  principal: fc.constantFrom("a1", "a2"),
  action: fc.constantFrom("before_tool_call", "after_llm_call"),
  resource: fc.constantFrom("t1", "t2"),
  resourceAttrs: fc.record({
    class: maybe(fc.constantFrom("shell", "file-read")),
    server: maybe(fc.constantFrom("gh", "x")),
  }),
  context,
});

describe("Cedar answers computed in TypeScript", () => {
  it("are the engine's whenever they are given (property)", () => {
    let answered = 0;
    let runs = 0;
    fc.assert(
      // One set, many requests: parsing a set into the engine is the slow part.
      fc.property(
        fc.array(policy, { minLength: 1, maxLength: 4 }),
        fc.array(request, { minLength: 25, maxLength: 25 }),
        (policies, reqs) => {
          const text = policies.map((p, i) => `@id("p${i}") ${p}`).join("\n");
          let set;
          try {
            set = parseCedarPolicySet(text, "generated.cedar");
          } catch {
            return; // the generator can write a policy Cedar refuses (a type it rejects at parse)
          }
          for (const req of reqs) {
            runs++;
            const principal = { type: "Agent", id: req.principal };
            const resource = { type: "Tool", id: req.resource };
            const attrs = JSON.parse(JSON.stringify(req.resourceAttrs)) as Record<string, never>;
            const call = {
              principal,
              action: { type: "Action", id: req.action },
              resource,
              context: req.context,
              entities: [
                { uid: principal, attrs: {}, parents: [] },
                { uid: resource, attrs, parents: [] },
              ],
            };
            const direct = directAnswer(set, call);
            const engine = cedarWasm.statefulIsAuthorized({
              ...call,
              context: call.context as never,
              entities: call.entities,
              preparsedPolicySetId: set.engineId,
            });
            if (direct === undefined) continue;
            answered++;
            expect(engine.type, text).toBe("success");
            if (engine.type !== "success") continue;
            const { decision, diagnostics } = engine.response;
            expect(diagnostics.errors, text).toEqual([]);
            const expected =
              direct.forbidIds.length > 0 ? "deny" : direct.permitted ? "allow" : "deny";
            expect(decision, `${text}\n${JSON.stringify(call)}`).toBe(expected);
            if (decision === "deny")
              expect(new Set(diagnostics.reason), text).toEqual(new Set(direct.forbidIds));
          }
        },
      ),
      { numRuns: 300 },
    );
    // Not vacuous: most generated requests are answered here.
    expect(answered).toBeGreaterThan(runs * 0.3);
  }, 120_000);

  it("leaves to the engine a request it would refuse whole", () => {
    const set = parseCedarPolicySet(`forbid (principal, action, resource) when { context.b };`);
    const base = {
      principal: { type: "Agent", id: "a" },
      action: { type: "Action", id: "before_tool_call" },
      resource: { type: "Tool", id: "t" },
      entities: [],
    };
    expect(directAnswer(set, { ...base, context: { b: true } })).toEqual({
      forbidIds: ["policy0"],
      permitted: false,
    });
    for (const odd of [1.5, 2 ** 60, "\ud800", { __extn: { fn: "ip", arg: "1.2.3.4" } }])
      expect(directAnswer(set, { ...base, context: { b: true, odd } })).toBeUndefined();
  });

  it("computes an expression the set's policies share once per request, afresh for each", () => {
    const rules = Array.from(
      { length: 10 },
      (_, i) => `forbid (principal, action, resource) when { context.b && context.n == ${i} };`,
    );
    const set = parseCedarPolicySet(rules.join("\n"));
    const base = {
      principal: { type: "Agent", id: "a" },
      action: { type: "Action", id: "before_tool_call" },
      resource: { type: "Tool", id: "t" },
      entities: [],
    };
    const counted = (b: boolean, n: number) => {
      const reads = { b: 0 };
      const context = {
        get b() {
          reads.b++;
          return b;
        },
        n,
      };
      return { answer: directAnswer(set, { ...base, context }), reads };
    };
    const first = counted(true, 3);
    expect(first.answer).toEqual({ forbidIds: ["policy3"], permitted: false });
    // Once by the check that the engine would read the request, once by the ten rules together.
    expect(first.reads.b).toBe(2);
    const second = counted(false, 3);
    expect(second.answer).toEqual({ forbidIds: [], permitted: false });
    expect(second.reads.b).toBe(2);
  });
});
