import {
  DEFAULT_APPROVAL_TIMEOUT_MS,
  SEVERITY_ORDER,
  type ApprovalAsk,
  type ApprovalRequest,
  type RequireApproval,
} from "../../catalog/approval.js";
import type { MergeRule } from "./rule.js";

/**
 * Approval requests combine: every enforced policy that asks is listed, and one person answers
 * once. The combination is the strictest of the asks (highest severity, shortest wait, deny on
 * timeout unless every asker said allow, every named group must approve), so no asking policy
 * gets less scrutiny than it asked for. The title is the highest-priority asker's.
 *
 * A block beats a request: the merge engine checks the block latch before this field
 * (src/merge/merge.ts), so a blocked call is never sent to a person.
 */
export function approvalRequest(field = "requireApproval"): MergeRule {
  return {
    fields: [field],
    apply(state, { policy, verdict }) {
      const asked = verdict[field] as RequireApproval | undefined;
      if (asked === undefined) return;
      const ask: ApprovalAsk = {
        policy,
        title: asked.title,
        ...(asked.description === undefined ? {} : { description: asked.description }),
        severity: asked.severity ?? "medium",
        timeoutMs: asked.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
        timeoutBehavior: asked.timeoutBehavior ?? "deny",
        ...(asked.approvers === undefined ? {} : { approvers: asked.approvers }),
      };
      const current = state.fields.get(field);
      if (current === undefined) {
        state.fields.set(field, { value: [ask], by: [policy] });
        return;
      }
      (current.value as ApprovalAsk[]).push(ask);
      current.by.push(policy);
    },
    finalize(state) {
      const write = state.fields.get(field);
      if (write === undefined) return;
      write.value = combineAsks(write.value as ApprovalAsk[]);
    },
  };
}

/** The one request for a non-empty list of asks, in merge order. */
export function combineAsks(asks: readonly ApprovalAsk[]): ApprovalRequest {
  const first = asks[0];
  if (first === undefined) throw new RangeError("combineAsks: no asks");
  const severity = SEVERITY_ORDER[Math.max(...asks.map((a) => SEVERITY_ORDER.indexOf(a.severity)))];
  const groups = new Set(asks.flatMap((a) => (a.approvers === undefined ? [] : [a.approvers])));
  return {
    title: first.title,
    ...(first.description === undefined ? {} : { description: first.description }),
    severity: severity ?? first.severity,
    timeoutMs: Math.min(...asks.map((a) => a.timeoutMs)),
    timeoutBehavior: asks.every((a) => a.timeoutBehavior === "allow") ? "allow" : "deny",
    approvers: [...groups].sort(),
    askedBy: [...asks],
  };
}
