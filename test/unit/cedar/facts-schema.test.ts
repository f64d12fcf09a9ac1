/**
 * `context.facts` is declared field by field in the Cedar schema (action-context.ts, schema.ts),
 * so the check `policy validate` and `registry apply` run refuses a misspelt fact and an unknown
 * fact value, naming the policy, line and column (issue 30, item 7); and every fact a rule may
 * read type-checks on the hooks that carry it.
 */
import { describe, expect, it } from "vitest";
import { checkCedarEntries } from "../../../src/cedar/check.js";
import { DERIVED_BOOLEANS, SHELL_BOOLEANS, SHELL_SETS } from "../../../src/cedar/action-context.js";
import { isHookbusError } from "../../../src/foundation/errors.js";

function refusal(cedar: string): string {
  try {
    checkCedarEntries([{ name: "rules", cedar }]);
  } catch (error) {
    if (isHookbusError(error) && error.code === "HOOKBUS_INVALID_CEDAR") return error.message;
    throw error;
  }
  return "";
}

const rule = (id: string, when: string, scope = `action == Action::"before_tool_call"`) =>
  `@id("${id}")\nforbid (principal, ${scope}, resource is Tool)\nwhen { ${when} };\n`;

describe("the schema of context.facts", () => {
  it("refuses a misspelt fact with the policy id, line and column", () => {
    const message = refusal(rule("typo", "context.facts.deletesRecursivly"));
    expect(message).toContain("rules: typo: line 3, column 8");
    expect(message).toContain("deletesRecursivly");
    expect(message).toContain("did you mean `deletesRecursively`?");
  });

  it("refuses a misspelt nested fact, and a misspelt class, path class or path label", () => {
    expect(refusal(rule("nested", "context.facts.url.metadta"))).toContain("rules: nested: line 3");
    expect(refusal(rule("cls", `resource.class == "shel"`))).toContain(
      '"shel" is not a tool class (did you mean "shell"?)',
    );
    expect(refusal(rule("target", `context.facts.deleteTargetClasses.contains("rot")`))).toContain(
      '"rot" is not a path class (did you mean "root"?)',
    );
    expect(
      refusal(rule("label", `context.facts.path.sensitive.containsAny(["ssh", "shell-startp"])`)),
    ).toContain('"shell-startp" is not a sensitive path label (did you mean "shell-startup"?)');
  });

  it("accepts every declared fact on before_tool_call and before_tool_result, and behind `has` on after_llm_call", () => {
    const reads = [
      ...[...SHELL_BOOLEANS, ...DERIVED_BOOLEANS, "unparsed"].map((b) => `context.facts.${b}`),
      ...[...SHELL_SETS, "dangerousCalls", "interpreters", "uploadFiles", "secrets"].map(
        (s) => `context.facts.${s}.contains("${s === "deleteTargetClasses" ? "root" : "x"}")`,
      ),
      `context.facts.unparsedReasons.contains("syntax")`,
      `context.facts.class == "shell"`,
      `context.facts.commandCount > 1`,
      `context.facts.url.metadata && context.facts.url.maxQuerySize > 9 && context.facts.url.hosts.contains("a")`,
      `context.facts.path.writesPersistence && context.facts.path.writtenSensitive.contains("crontab")`,
      `context.facts.recipients.anyExternal && context.facts.recipients.count > 0`,
    ];
    const tool = `action in [Action::"before_tool_call", Action::"before_tool_result"]`;
    expect(refusal(reads.map((read, i) => rule(`fact-${i}`, read, tool)).join("\n"))).toBe("");
    const llm = `action == Action::"after_llm_call"`;
    expect(refusal(rule("llm", `context has facts && context.facts.deletes`, llm))).toBe("");
    expect(refusal(rule("llm-no-has", "context.facts.deletes", llm))).toContain("llm-no-has");
  });
});
