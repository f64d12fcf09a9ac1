/**
 * The approval rules (src/merge/rules/approval-request.ts) as properties over generated outcome
 * lists of before_tool_call: a block beats a request, requests combine into one that lists every
 * asking policy, a shadow request is recorded and never raised, and the approval is for the
 * params as first-writer-wins merged them.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergeOutcomes, type PolicyOutcomeInput } from "../../../src/index.js";
import { SEVERITY_ORDER, type ApprovalRequest } from "../../../src/catalog/approval.js";

const EVENT = { toolName: "exec", toolCallId: "t1", params: { cmd: "ls" } };

const ask = fc.record(
  {
    title: fc.constantFrom("run a shell command", "send an email", "pay"),
    description: fc.constantFrom("why", "because"),
    severity: fc.constantFrom(...SEVERITY_ORDER),
    timeoutMs: fc.integer({ min: 1000, max: 86_400_000 }),
    timeoutBehavior: fc.constantFrom("deny" as const, "allow" as const),
    approvers: fc.constantFrom("security", "legal", "ops"),
  },
  { requiredKeys: ["title"] },
);

const verdict = fc.record(
  {
    params: fc.constantFrom({ cmd: "ls -la" }, { cmd: "echo [redacted]" }, {}),
    requireApproval: ask,
    block: fc.constantFrom(false, false, true),
    blockReason: fc.constantFrom("no", "never"),
  },
  { requiredKeys: [] },
);

const outcomes = fc
  .uniqueArray(
    fc.record({
      policy: fc.constantFrom("a", "b", "c", "d", "e", "f"),
      priority: fc.integer({ min: 0, max: 3 }),
      mode: fc.constantFrom("enforce" as const, "enforce" as const, "shadow" as const),
      verdict,
    }),
    { selector: (o) => o.policy, maxLength: 6 },
  )
  .map((list) => list.map((o): PolicyOutcomeInput => ({ ...o, status: "ok" })));

/** Merge order as the engine defines it: priority high first, ties by name. */
function ordered(list: readonly PolicyOutcomeInput[]): PolicyOutcomeInput[] {
  return [...list].sort((x, y) => y.priority - x.priority || (x.policy < y.policy ? -1 : 1));
}

type V = { params?: unknown; requireApproval?: Record<string, unknown>; block?: boolean };
const v = (o: PolicyOutcomeInput) => o.verdict as V;

function merge(list: readonly PolicyOutcomeInput[]) {
  return mergeOutcomes("before_tool_call", EVENT, list);
}

describe("approval merge rules (properties)", () => {
  it("a block beats an approval request: any enforced block gives outcome block, with no request", () => {
    fc.assert(
      fc.property(outcomes, (list) => {
        const enforced = list.filter((o) => o.mode !== "shadow");
        const { decision } = merge(list);
        if (enforced.some((o) => v(o).block === true)) {
          expect(decision.outcome).toBe("block");
          expect(decision.requireApproval).toBeUndefined();
        }
      }),
    );
  });

  it("requests from several policies combine into one that lists every asking policy in merge order", () => {
    fc.assert(
      fc.property(outcomes, (list) => {
        const enforced = ordered(list.filter((o) => o.mode !== "shadow"));
        if (enforced.some((o) => v(o).block === true)) return;
        const asking = enforced.filter((o) => v(o).requireApproval !== undefined);
        const { decision } = merge(list);
        if (asking.length === 0) {
          expect(decision.outcome).not.toBe("pending_approval");
          expect(decision.requireApproval).toBeUndefined();
          return;
        }
        expect(decision.outcome).toBe("pending_approval");
        const request = decision.requireApproval as ApprovalRequest;
        expect(request.askedBy.map((a) => a.policy)).toEqual(asking.map((o) => o.policy));
        expect(decision.decidedBy.requireApproval).toEqual(asking.map((o) => o.policy));
        // The strictest of the asks: no asking policy gets less scrutiny than it asked for.
        for (const a of request.askedBy) {
          expect(request.timeoutMs).toBeLessThanOrEqual(a.timeoutMs);
          expect(SEVERITY_ORDER.indexOf(request.severity)).toBeGreaterThanOrEqual(
            SEVERITY_ORDER.indexOf(a.severity),
          );
          if (a.timeoutBehavior === "deny") expect(request.timeoutBehavior).toBe("deny");
          if (a.approvers !== undefined) expect(request.approvers).toContain(a.approvers);
        }
        expect(request.title).toBe(asking.map((o) => v(o).requireApproval?.title)[0]);
      }),
    );
  });

  it("a shadow policy's request is recorded in the shadow decision, never raised", () => {
    fc.assert(
      fc.property(outcomes, (list) => {
        const result = merge(list);
        const enforcedAsk = list.some(
          (o) => o.mode !== "shadow" && v(o).requireApproval !== undefined,
        );
        if (!enforcedAsk) expect(result.decision.outcome).not.toBe("pending_approval");
        const shadowAsk = list.filter(
          (o) => o.mode === "shadow" && v(o).requireApproval !== undefined,
        );
        if (shadowAsk.length > 0 && result.shadow?.decision.outcome === "pending_approval") {
          const askedBy = (result.shadow.decision.requireApproval as ApprovalRequest).askedBy;
          for (const o of shadowAsk) expect(askedBy.map((a) => a.policy)).toContain(o.policy);
        }
        const enforcedBy = result.decision.requireApproval?.askedBy;
        for (const o of shadowAsk)
          expect(enforcedBy?.map((a) => a.policy) ?? []).not.toContain(o.policy);
      }),
    );
  });

  it("params follow first-writer-wins and the pending decision carries the rewritten params", () => {
    fc.assert(
      fc.property(outcomes, (list) => {
        const enforced = ordered(list.filter((o) => o.mode !== "shadow"));
        const { decision } = merge(list);
        if (decision.outcome !== "pending_approval") return;
        const writer = enforced.find((o) => v(o).params !== undefined);
        expect(decision.params).toEqual(writer === undefined ? undefined : v(writer).params);
        if (writer !== undefined) expect(decision.decidedBy.params).toEqual([writer.policy]);
      }),
    );
  });

  it("merge order, not arrival order, decides the combined request", () => {
    fc.assert(
      fc.property(outcomes, fc.integer(), (list, seed) => {
        const shuffled = [...list].sort(
          (x, y) => ((x.policy.charCodeAt(0) * seed) % 7) - ((y.policy.charCodeAt(0) * seed) % 7),
        );
        expect(merge(shuffled).decision).toEqual(merge(list).decision);
      }),
    );
  });

  it("a malformed request is an invalid verdict: fail-closed blocks, it never becomes an approval", () => {
    const { decision } = merge([
      {
        policy: "p",
        priority: 1,
        status: "ok",
        verdict: { requireApproval: { title: "x", timeoutMs: 10 } },
      },
    ]);
    expect(decision.outcome).toBe("block");
  });

  it("only before_tool_call takes requireApproval (after_llm_call and before_response_emit reject it)", () => {
    for (const hook of ["after_llm_call", "before_response_emit"] as const) {
      const event =
        hook === "after_llm_call" ? { toolCalls: [] } : { content: "hi", allContent: ["hi"] };
      const { decision } = mergeOutcomes(hook, event, [
        { policy: "p", priority: 1, status: "ok", verdict: { requireApproval: { title: "x" } } },
      ]);
      expect(decision.outcome).toBe("block");
    }
  });
});
