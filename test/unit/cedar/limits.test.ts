import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkCedarEntries,
  emptySessionFacts,
  evaluateCedar,
  parseCedarPolicySet,
  type CedarPolicySet,
} from "../../../src/cedar/index.js";
import {
  cedarLimitIssues,
  MAX_CEDAR_DEPTH,
  MAX_CEDAR_RULES,
  MAX_CEDAR_SET_BYTES,
  MAX_CEDAR_TERMS,
} from "../../../src/cedar/limits.js";
import { cedarWasm, engineTraps } from "../../../src/cedar/wasm.js";
import { isHookbusError } from "../../../src/foundation/errors.js";

const EXEC = `@id("no-exec") forbid (principal, action == Action::"before_tool_call", resource == Tool::"exec");`;
const context = { agentId: "agent-1", sessionKey: "s-1" };
const execCall = { toolName: "exec", params: { command: "ls" } };

function rule(condition: string): string {
  return `forbid (principal, action == Action::"before_tool_call", resource is Tool) when { ${condition} };`;
}
const parens = (depth: number) => `${"(".repeat(depth)}resource.name == "x"${")".repeat(depth)}`;
const orChain = (terms: number) =>
  Array.from({ length: terms }, (_, i) => `resource.name == "t${i}"`).join(" || ");

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return isHookbusError(error) ? error.code : `uncoded: ${String(error)}`;
  }
}

function decideExec(set: CedarPolicySet) {
  return evaluateCedar(set, {
    hook: "before_tool_call",
    context,
    event: execCall,
    session: emptySessionFacts(),
  });
}

describe("Cedar set limits", () => {
  it("refuses each limit with its own code, at parse and at registry apply's check", () => {
    const cases: [string, string][] = [
      [rule(parens(MAX_CEDAR_DEPTH + 1)), "HOOKBUS_CEDAR_TOO_DEEP"],
      [rule(orChain(MAX_CEDAR_TERMS)), "HOOKBUS_CEDAR_TOO_MANY_TERMS"],
      [
        Array.from({ length: MAX_CEDAR_RULES + 1 }, () => EXEC.slice(15)).join("\n"),
        "HOOKBUS_CEDAR_TOO_MANY_RULES",
      ],
      [`// ${"x".repeat(MAX_CEDAR_SET_BYTES)}\n${EXEC}`, "HOOKBUS_CEDAR_TOO_LARGE"],
    ];
    for (const [text, code] of cases) {
      expect(codeOf(() => parseCedarPolicySet(text, "t.cedar"))).toBe(code);
      expect(codeOf(() => checkCedarEntries([{ name: "p", cedar: text }]))).toBe(code);
    }
  });

  it("refuses the reported attacks before the engine sees them", () => {
    const traps = engineTraps();
    expect(codeOf(() => parseCedarPolicySet(rule(parens(100))))).toBe("HOOKBUS_CEDAR_TOO_DEEP");
    expect(codeOf(() => parseCedarPolicySet(rule(orChain(500))))).toBe(
      "HOOKBUS_CEDAR_TOO_MANY_TERMS",
    );
    expect(engineTraps()).toBe(traps);
  });

  it("does not count brackets or operators inside strings and comments", () => {
    const text = `// ((((((((( || || ||\n@reason("${"(".repeat(40)} \\" ||")\n${rule(`resource.name == "${"[".repeat(40)}&&"`)}`;
    expect(cedarLimitIssues(text)).toEqual([]);
    expect(parseCedarPolicySet(text).policies.size).toBe(1);
  });

  it("names every policy over a limit, by position", () => {
    const issues = cedarLimitIssues([EXEC, rule(parens(40)), EXEC, rule(orChain(200))].join("\n"));
    expect(issues.map((i) => [i.limit, i.path])).toEqual([
      ["depth", "policy1"],
      ["terms", "policy3"],
    ]);
  });

  it("no set within the limits traps the engine (deepest nesting around the longest chains)", () => {
    const traps = engineTraps();
    const operator = fc.constantFrom("||", "&&", "==", "<", "+", "-", "*");
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_CEDAR_DEPTH - 2 }),
        fc.integer({ min: 1, max: MAX_CEDAR_TERMS }),
        operator,
        fc.constantFrom("(", "["),
        (depth, terms, op, bracket) => {
          const close = bracket === "(" ? ")" : "]";
          const chain = Array.from({ length: terms }, () => "1").join(` ${op} `);
          const body = `${bracket.repeat(depth)}${chain}${close.repeat(depth)} == 1`;
          const text = rule(body);
          if (cedarLimitIssues(text).length > 0) return; // over by the `==` and `when`: refused
          const code = codeOf(() => decideExec(parseCedarPolicySet(text)));
          expect(code === undefined || code === "HOOKBUS_INVALID_CEDAR").toBe(true);
        },
      ),
      { numRuns: 60 },
    );
    expect(engineTraps()).toBe(traps);
  });
});

describe("an engine that traps", () => {
  it("is replaced: sets parsed before it still decide, and the trapping set answers its own error", () => {
    const blocking = parseCedarPolicySet(EXEC, "blocking.cedar");
    expect(decideExec(blocking).verdict?.block).toBe(true);
    const traps = engineTraps();
    // The reported attack, straight at the engine (the limits would refuse it first).
    expect(codeOf(() => cedarWasm.policyToJson(rule(parens(200))))).toBe(
      "HOOKBUS_CEDAR_ENGINE_TRAP",
    );
    expect(engineTraps()).toBe(traps + 1);
    // The fresh instance decides: the blocking set is pre-parsed again into it.
    expect(decideExec(blocking).verdict?.block).toBe(true);
    const failOpen = parseCedarPolicySet(`permit (principal, action, resource);`, "open.cedar");
    expect(decideExec(failOpen)).toEqual({ status: "ok", decidedBy: [] });
  });

  it("marks a set whose evaluation trapped, and never sends it to the engine again", () => {
    const valid = parseCedarPolicySet(EXEC, "valid.cedar");
    // A set built by hand past the limits (parse refuses it): 400 `||` terms trap evaluation.
    const text = `@id("deep") ${rule(orChain(400))}`;
    const policies = new Map([["deep", { id: "deep", effect: "forbid" as const, text }]]);
    const evil: CedarPolicySet = { ...valid, text, policies, engineId: "hookbus:test-deep" };
    const traps = engineTraps();
    const first = decideExec(evil);
    expect(first.status).toBe("error");
    expect(first.error?.code).toBe("HOOKBUS_CEDAR_ENGINE_TRAP");
    expect(engineTraps()).toBe(traps + 1);
    expect(decideExec(evil).error?.code).toBe("HOOKBUS_CEDAR_ENGINE_TRAP");
    expect(engineTraps()).toBe(traps + 1); // answered without reaching the engine
    expect(decideExec(valid).verdict?.block).toBe(true);
  });
});
