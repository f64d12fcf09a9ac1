/**
 * Approval texts at rest with encryption on (docs/privacy.md, "Approvals"): the approvals bucket
 * holds the request's title, params and answers' reasons sealed under the call's subject key;
 * approvers, who hold no KEK, still read them through a coordinator, and an approval settles as
 * before: the agent runs the approved params, the settlement's record is sealed too.
 */
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { answerApproval, listApprovals, showApproval } from "../../../src/approvals/client.js";
import type { ApprovalProgress } from "../../../src/agent/approval-wait.js";
import type { ApprovalRecord } from "../../../src/log/record.js";
import { ENCRYPTED_MARK, subjectDigest } from "../../../src/privacy/index.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";
import { until } from "../../support/wait.js";
import { readerRecordKeys, testKek } from "../../support/privacy.js";

const nats = useNatsServer();
const kek = testKek();
const PAYEE = "Ocelot-Dunmore-5521";

const asker = definePolicy({
  name: "asker",
  version: "1.0.0",
  hooks: {
    before_tool_call: (e) => ({
      requireApproval: {
        title: `wire to ${String((e.params as { payee?: string }).payee)}`,
        description: "a person must look",
        timeoutMs: 60_000,
      },
    }),
  },
});

/** Adds a memo, so the approval is for rewritten params (kept in the sealed pending decision). */
const memo = definePolicy({
  name: "memo",
  version: "1.0.0",
  hooks: { before_tool_call: (e) => ({ params: { ...e.params, memo: "by policy" } }) },
});

describe("approval texts sealed at rest", () => {
  it("keeps ciphertext in the bucket, shows approvers the texts, and settles as before", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          { name: "memo", hooks: ["before_tool_call"], priority: 20 },
          { name: "asker", hooks: ["before_tool_call"], priority: 10 },
        ],
      },
      policies: [memo, asker],
      coordinator: { privacy: { kek } },
      clientTimeoutMs: 30_000,
    });
    const progress: ApprovalProgress[] = [];
    const held = p.client.call(
      "before_tool_call",
      { agentId: "agent-ap", sessionKey: "s-sealed", runId: "r", toolCallId: "t1" },
      { toolName: "wire", toolCallId: "t1", params: { payee: PAYEE } },
      { callId: "wire-1", onApproval: (report) => progress.push(report) },
    );
    held.catch(() => {});
    const first = await until(() => progress[0], 15_000, "the request is pending");
    // The agent's own status question is answered opened.
    expect(first.request.title).toBe(`wire to ${PAYEE}`);

    // The bucket: clear what settles the request, sealed what a person or a policy wrote.
    const kv = await new Kvm(jetstream(p.connections.reader)).open(p.subjects.approvalsBucket);
    const raw = (await kv.get(first.id))!.string();
    expect(raw).not.toContain(PAYEE);
    expect(raw).not.toContain("a person must look");
    const stored = JSON.parse(raw) as Record<string, unknown> & {
      request: { title: string; timeoutMs: number };
      encrypted: { subject: string };
    };
    expect(stored.request.title).toBe(ENCRYPTED_MARK);
    expect(stored.request.timeoutMs).toBe(60_000);
    expect(stored.toolName).toBe("wire");
    expect(stored.encrypted.subject).toBe(subjectDigest("session:s-sealed"));

    // Approvers read the texts through a coordinator.
    const shown = await showApproval(p.connections.reader, first.id, p.namespace);
    expect(shown.params).toEqual({ payee: PAYEE, memo: "by policy" });
    expect(shown.request.description).toBe("a person must look");
    expect(shown.encrypted).toBeUndefined();
    const listed = await listApprovals(p.connections.reader, p.namespace);
    expect(listed.map((e) => e.request.title)).toEqual([`wire to ${PAYEE}`]);

    await answerApproval(
      p.connections.reader,
      { id: first.id, decision: "approve", reason: `checked ${PAYEE}` },
      { namespace: p.namespace, approver: "alice" },
    );
    const { decision } = await held;
    expect(decision).toMatchObject({
      outcome: "modify",
      params: { payee: PAYEE, memo: "by policy" },
    });
    const settledRaw = (await kv.get(first.id))!.string();
    expect(settledRaw).not.toContain(PAYEE);

    // The settlement's record is sealed like every record, and opens with the KEK.
    const keys = await readerRecordKeys(p, kek);
    const records = await p.readLog();
    const approval = records
      .map((s) => s.record)
      .find((r): r is ApprovalRecord => r.kind === "approval");
    expect(approval?.answers[0]?.reason).toBe(ENCRYPTED_MARK);
    const opened = (await keys.open(approval!)).record;
    expect(opened.answers[0]?.reason).toBe(`checked ${PAYEE}`);
  }, 60_000);
});
