/** The registry's retention section: its limits, its coded error, and which rule a key follows. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseRegistryDocument } from "../../../src/registry/document.js";
import {
  DAY_MS,
  MAX_RETENTION_AGENTS,
  MAX_RETENTION_DAYS,
  isExpired,
  ruleFor,
} from "../../../src/registry/retention.js";

const withRetention = (retention: unknown) => ({ policies: [], retention });

function issuesOf(retention: unknown): string[] {
  try {
    parseRegistryDocument(withRetention(retention));
    return [];
  } catch (error) {
    expect((error as { code?: string }).code).toBe("HOOKBUS_INVALID_REGISTRY");
    return (error as { details: { issues: { path: string }[] } }).details.issues.map((i) => i.path);
  }
}

describe("registry retention", () => {
  it("accepts 0 to the maximum days, per namespace and per agent", () => {
    const doc = parseRegistryDocument(
      withRetention({ days: 0, agents: { a: MAX_RETENTION_DAYS } }),
    );
    expect(doc.retention).toEqual({ days: 0, agents: { a: MAX_RETENTION_DAYS } });
  });

  it("refuses bad input with HOOKBUS_INVALID_REGISTRY, by path", () => {
    expect(issuesOf({ days: -1 })).toEqual(["retention.days"]);
    expect(issuesOf({ days: 1.5 })).toEqual(["retention.days"]);
    expect(issuesOf({ days: MAX_RETENTION_DAYS + 1 })).toEqual(["retention.days"]);
    expect(issuesOf({ days: "30" })).toEqual(["retention.days"]);
    expect(issuesOf({ keep: 3 })).toEqual(["retention"]);
    expect(issuesOf({ agents: { a: -2 } })).toEqual(["retention.agents.a"]);
    expect(issuesOf({ agents: { "": 1 } })).not.toEqual([]);
    expect(issuesOf({ agents: { ["x".repeat(257)]: 1 } })).not.toEqual([]);
    const many = Object.fromEntries(
      Array.from({ length: MAX_RETENTION_AGENTS + 1 }, (_, i) => [`a${i}`, 1]),
    );
    expect(issuesOf({ agents: many })).toContain("retention.agents");
    expect(issuesOf(JSON.parse('{"agents": {"__proto__": 1}}'))).toContain(
      "retention.agents.__proto__",
    );
  });

  it("an agent's own rule wins; a name on Object's prototype is no rule", () => {
    const rules = { days: 30, agents: { short: 0 } };
    expect(ruleFor(rules, "short")).toEqual({ name: "agent:short", days: 0 });
    expect(ruleFor(rules, "other")).toEqual({ name: "namespace", days: 30 });
    expect(ruleFor(rules, undefined)).toEqual({ name: "namespace", days: 30 });
    expect(ruleFor(rules, "constructor")).toEqual({ name: "namespace", days: 30 });
    expect(ruleFor({ agents: { short: 0 } }, "other")).toBeUndefined();
  });

  it("a key expires exactly when its age reaches the rule", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_RETENTION_DAYS }),
        fc.integer({ min: 0, max: 2 * MAX_RETENTION_DAYS * DAY_MS }),
        (days, ageMs) => {
          const made = new Date(0);
          const expired = isExpired({ name: "namespace", days }, made, new Date(ageMs));
          expect(expired).toBe(ageMs >= days * DAY_MS);
        },
      ),
    );
  });
});
