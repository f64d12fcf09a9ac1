/**
 * docs/example-policies.md, "approval when a recipient is outside example.com": the policy as the
 * docs print it, evaluated by the real Cedar engine over the action facts. A look-alike domain
 * (`evil@example.com.attacker.net`) is outside; so is one outsider among insiders, in any of the
 * shapes the adapters send recipients in.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  assertCedarTypes,
  emptySessionFacts,
  evaluateCedar,
  parseCedarPolicySet,
} from "../../../src/cedar/index.js";

const DOC = readFileSync(new URL("../../../docs/example-policies.md", import.meta.url), "utf8");
const SECTION = DOC.slice(DOC.indexOf("## Cedar: approval when a recipient is outside"));
const POLICY = /```cedar\n([\s\S]*?)```/.exec(SECTION)![1]!;

const set = parseCedarPolicySet(POLICY, "external-recipient.cedar");
assertCedarTypes(set);

function decide(toolName: string, params: Record<string, unknown>) {
  const context = { agentId: "a", sessionKey: "s", runId: "r" };
  const event = { toolName, toolCallId: "t", params };
  return evaluateCedar(set, {
    hook: "before_tool_call",
    context,
    event,
    session: emptySessionFacts(),
  });
}

const ASKED = {
  status: "ok",
  verdict: {
    requireApproval: expect.objectContaining({
      title: "Send to someone outside example.com?",
    }) as unknown,
  },
};

describe("approval when any recipient is outside example.com (one Cedar policy)", () => {
  it("asks for a look-alike domain that ends elsewhere", () => {
    const result = decide("send_email", { to: "evil@example.com.attacker.net", body: "hi" });
    expect(result).toMatchObject(ASKED);
  });

  it("asks when one recipient of many is outside, in each adapter's shape", () => {
    const shapes: [string, Record<string, unknown>][] = [
      ["send_email", { to: "ops@example.com, x@gmail.com", body: "b" }],
      ["mcp__gmail__send_email", { to: ["ops@example.com", "x@attacker.net"], body: "b" }],
      ["send_email", { to: "ops@example.com", cc: ["boss@example.com", "leak@evil.io"] }],
      ["send_email", { recipients: [{ address: "spy@EXAMPLE.COM.evil.io", name: "ops" }] }],
    ];
    for (const [tool, params] of shapes) expect(decide(tool, params), tool).toMatchObject(ASKED);
  });

  it("lets a message to example.com only through, and a call with no recipient", () => {
    expect(decide("send_email", { to: "ops@example.com", body: "hi" })).toEqual({
      status: "ok",
      decidedBy: [],
    });
    expect(
      decide("mcp__gmail__send_email", { to: ["a@example.com", "B@Example.com"], body: "b" }),
    ).toEqual({ status: "ok", decidedBy: [] });
    expect(decide("Read", { file_path: "README.md" })).toEqual({ status: "ok", decidedBy: [] });
  });
});
