/** Redaction rules without NATS: pointers, wildcards, when, actions, and registry validation. */
import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { canonicalize } from "../../../src/foundation/canonical-json.js";
import type { DecisionRecord } from "../../../src/log/record.js";
import { LogRecord, type ObservationRecord } from "../../../src/log/record.js";
import {
  formatPointer,
  hashValue,
  parsePointer,
  pointerProblem,
  RedactionRule,
  redactRecord,
  REDACTION_MASK,
  type RedactionRuleInput,
} from "../../../src/log/redaction.js";
import { parseRegistryDocument } from "../../../src/registry/document.js";

const rules = (...input: RedactionRuleInput[]) => input.map((r) => RedactionRule.parse(r));

function emit(outcome: "allow" | "block", content = "the secret is hunter2"): DecisionRecord {
  return {
    v: 1,
    kind: "decision",
    callId: "c-1",
    hook: "before_response_emit",
    context: { agentId: "a", sessionKey: "s", runId: "r" },
    event: { content, allContent: ["hi", content] },
    outcomes: [
      {
        policy: "dlp",
        priority: 10,
        mode: "enforce",
        failMode: "fail-closed",
        status: "ok",
        effect: "applied",
        verdict:
          outcome === "block"
            ? { block: true, blockReason: "secret" }
            : { content: "the secret is [x]" },
        latencyMs: 1,
      },
      {
        policy: "shadow-dlp",
        priority: 5,
        mode: "shadow",
        failMode: "fail-open",
        status: "ok",
        effect: "no-opinion",
        verdict: { content: "hunter2 again" },
        latencyMs: 1,
      },
    ],
    decision:
      outcome === "block"
        ? { outcome: "block", blockReason: "secret", decidedBy: { block: "dlp" } }
        : { outcome: "modify", content: "the secret is [x]", decidedBy: { content: "dlp" } },
    registryRevision: 3,
    receivedAt: "2026-01-01T00:00:00.000Z",
    decidedAt: "2026-01-01T00:00:00.001Z",
  };
}

describe("JSON pointers", () => {
  it("parses and formats RFC 6901 escapes", () => {
    expect(parsePointer("/a~1b/c~0d/")).toEqual(["a/b", "c~d", ""]);
    expect(formatPointer(["a/b", "c~d", 0])).toBe("/a~1b/c~0d/0");
    expect(() => parsePointer("event")).toThrow(/starts with/);
    expect(() => parsePointer("/a~2")).toThrow(/~/);
  });

  it("accepts pointers into open values and refuses the fields readers need", () => {
    for (const ok of [
      "/event/content",
      "/event/allContent/*",
      "/event/*",
      "/context/channel",
      "/decision/content",
      "/shadow/decision/content",
      "/outcomes/*/verdict",
      "/outcomes/0/verdict/content",
      "/outcomes/*/error/message",
      "/verdict/content",
      "/error/message",
    ])
      expect(pointerProblem(ok), ok).toBeUndefined();
    for (const bad of [
      "/event",
      "/callId",
      "/kind",
      "/chain/hash",
      "/redacted",
      "/context/agentId",
      "/context/sessionKey",
      "/context/*",
      "/decision/outcome",
      "/decision/decidedBy",
      "/decision/*",
      "/outcomes/*/policy",
      "/outcomes/x/verdict",
      "/registryRevision",
      "/event/con*",
      "event/content",
      "",
    ])
      expect(pointerProblem(bad), bad).toMatch(
        /cannot be redacted|not a JSON pointer|whole segment/,
      );
  });
});

describe("redactRecord", () => {
  it("masks the content of a blocked before_response_emit with when: block, and lists the path", () => {
    const r = rules({
      hooks: ["before_response_emit"],
      pointer: "/event/content",
      action: "mask",
      when: "block",
    });
    const blocked = redactRecord(emit("block"), r);
    expect(blocked.event.content).toBe(REDACTION_MASK);
    expect(blocked.redacted).toEqual([{ path: "/event/content", action: "mask" }]);
    expect(LogRecord.parse(blocked)).toEqual(blocked);
    // Allowed (modified, not blocked): untouched, and the very same object.
    const allowed = emit("allow");
    expect(redactRecord(allowed, r)).toBe(allowed);
  });

  it("never changes the record it is given, nor objects it shares with the caller", () => {
    const record = emit("block");
    const before = structuredClone(record);
    const decision = record.decision;
    const out = redactRecord(
      record,
      rules(
        { pointer: "/event/allContent/*", action: "mask" },
        { pointer: "/decision/blockReason", action: "hash" },
        { pointer: "/outcomes/*/verdict", action: "mask" },
      ),
    );
    expect(record).toEqual(before);
    expect(record.decision).toBe(decision);
    expect(out.event.allContent).toEqual([REDACTION_MASK, REDACTION_MASK]);
    expect(out.decision.blockReason).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(out.outcomes.map((o) => o.verdict)).toEqual([REDACTION_MASK, REDACTION_MASK]);
    // Untouched branches are shared, not copied.
    expect(out.context).toBe(record.context);
  });

  it("expands * over array elements into concrete paths, in order", () => {
    const out = redactRecord(
      emit("allow"),
      rules({ pointer: "/outcomes/*/verdict/content", action: "mask" }),
    );
    expect(out.redacted).toEqual([
      { path: "/outcomes/0/verdict/content", action: "mask" },
      { path: "/outcomes/1/verdict/content", action: "mask" },
    ]);
    expect(out.outcomes[0]!.verdict).toEqual({ content: REDACTION_MASK });
    expect(out.outcomes[1]!.verdict).toEqual({ content: REDACTION_MASK });
  });

  it("hashes the canonical JSON of the value: sha256 without a key, HMAC-SHA256 with one", () => {
    const value = { b: 2, a: "x" };
    const text = canonicalize(value);
    expect(text).toBe('{"a":"x","b":2}');
    expect(hashValue(value)).toBe(`sha256:${createHash("sha256").update(text).digest("hex")}`);
    expect(hashValue(value, "k")).toBe(
      `hmac-sha256:${createHmac("sha256", "k").update(text).digest("hex")}`,
    );
    const r = rules({ pointer: "/event/content", action: "hash" });
    const plain = redactRecord(emit("allow", "pw"), r);
    const keyed = redactRecord(emit("allow", "pw"), r, { key: "k" });
    expect(plain.event.content).toBe(hashValue("pw"));
    expect(keyed.event.content).toBe(hashValue("pw", "k"));
    expect(keyed.redacted).toEqual([{ path: "/event/content", action: "hash" }]);
  });

  it("applies rules only to their hooks, skips absent paths, and does not redact inside a redacted path", () => {
    const record = emit("allow");
    expect(
      redactRecord(
        record,
        rules({ hooks: ["before_tool_call"], pointer: "/event/content", action: "mask" }),
      ),
    ).toBe(record);
    expect(redactRecord(record, rules({ pointer: "/event/nothing", action: "mask" }))).toBe(record);
    const out = redactRecord(
      record,
      rules(
        { pointer: "/outcomes/0/verdict/content", action: "hash" },
        { pointer: "/outcomes/0/verdict", action: "mask" },
        { pointer: "/outcomes/0/verdict/content", action: "mask" },
        { pointer: "/outcomes/0/verdict", action: "mask" },
      ),
    );
    expect(out.redacted).toEqual([{ path: "/outcomes/0/verdict", action: "mask" }]);
  });

  it("counts an after_tool_call observation of a blocked tool as blocked", () => {
    const obs = (blocked: boolean): ObservationRecord => ({
      v: 1,
      kind: "observation",
      eventId: "e",
      hook: "after_tool_call",
      context: { agentId: "a", sessionKey: "s" },
      event: { toolName: "exec", params: { cmd: "cat ~/.ssh/id_rsa" }, blocked },
      publishedAt: "2026-01-01T00:00:00.000Z",
    });
    const r = rules({ pointer: "/event/params", action: "mask", when: "block" });
    expect(redactRecord(obs(true), r).event.params).toBe(REDACTION_MASK);
    expect(redactRecord(obs(false), r).event.params).toEqual({ cmd: "cat ~/.ssh/id_rsa" });
  });
});

describe("redact in the registry document", () => {
  const policies = [{ name: "dlp", hooks: ["before_response_emit"], priority: 1 }];

  it("accepts rules and fills in when: always", () => {
    const doc = parseRegistryDocument({
      policies,
      redact: [{ pointer: "/event/content", action: "mask" }],
    });
    expect(doc.redact).toEqual([{ pointer: "/event/content", action: "mask", when: "always" }]);
    expect(parseRegistryDocument({ policies }).redact).toBeUndefined();
  });

  it("reports every bad rule by path, with the schema's and its own checks together", () => {
    let error: unknown;
    try {
      parseRegistryDocument(
        {
          policies,
          redact: [
            { pointer: "/callId", action: "mask" },
            { pointer: "/event/content", action: "scramble" },
            { pointer: "/event/x", action: "mask", hooks: ["before_tool_call", "nope"] },
            { pointer: "/event/y", action: "hash", when: "sometimes", extra: 1 },
            { action: "mask" },
          ],
        },
        "r.json",
      );
    } catch (e) {
      error = e;
    }
    expect(isHookbusError(error, "HOOKBUS_INVALID_REGISTRY")).toBe(true);
    const issues = (error as { details: { issues: { path: string; rule: string }[] } }).details
      .issues;
    const paths = issues.map((i) => i.path).sort();
    expect(paths).toEqual(
      [
        "redact.0.pointer",
        "redact.1.action",
        "redact.2.hooks.1",
        "redact.3",
        "redact.3.when",
        "redact.4.pointer",
      ].sort(),
    );
    expect((error as Error).message).toMatch(/redact\.0\.pointer: "\/callId" cannot be redacted/);
    expect((error as Error).message).toMatch(/redact\.2\.hooks\.1: unknown hook "nope"/);
  });
});
