/**
 * What really crosses the wire, captured by a raw NATS subscription while the pipeline runs, checked
 * against the checked-in JSON Schemas (`schemas/`, the contract for workers in other languages)
 * and the zod schemas they are generated from.
 */
import { headers, type Msg, type MsgHdrs } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
// The envelope schemas are not part of the public entry; they generate schemas/envelope/.
import {
  CallReply,
  CallRequest,
  PolicyReply,
  PolicyRequest,
  WireError,
} from "../../../src/bus/envelope.js";
import {
  definePolicy,
  MODIFYING_HOOK_NAMES,
  parseContext,
  parseDecision,
  parseEvent,
  parseVerdict,
  type ModifyingHookName,
} from "../../../src/index.js";
import { LogRecord } from "../../../src/log/record.js";
import { startPipeline, until, useNatsServer } from "./harness.js";
import { schemaErrors } from "../../support/json-schema.js";

const nats = useNatsServer();

interface Captured {
  subject: string;
  reply: string | undefined;
  headers: MsgHdrs | undefined;
  data: Uint8Array;
  body: unknown;
}

function conforms(path: string, value: unknown, what: string): void {
  expect(schemaErrors(path, value), `${what} against schemas/${path}`).toEqual([]);
}

describe("wire conformance", () => {
  it("the schema checker is not vacuous", () => {
    const decision = { outcome: "allow", decidedBy: {} };
    expect(schemaErrors("hooks/before_tool_call.decision.schema.json", decision)).toEqual([]);
    expect(
      schemaErrors("hooks/before_tool_call.decision.schema.json", { ...decision, extra: 1 }),
    ).not.toEqual([]);
    expect(
      schemaErrors("hooks/before_tool_call.decision.schema.json", {
        outcome: "maybe",
        decidedBy: {},
      }),
    ).not.toEqual([]);
    expect(schemaErrors("envelope/call-request.schema.json", { callId: "x" })).not.toEqual([]);
    expect(
      schemaErrors("log-record.schema.json", { v: 1, kind: "decision", context: {} }),
    ).not.toEqual([]);
  });

  it("CallRequest, PolicyRequest, PolicyReply, CallReply, error replies and log records of every modifying hook match the schemas", async () => {
    const conform = definePolicy({
      name: "conform",
      version: "1.0.0",
      hooks: {
        before_agent_reply: () => ({ reply: { text: "canned" }, reason: "demo" }),
        before_llm_call: () => ({ systemPrompt: "be brief", tools: [{ name: "read_file" }] }),
        after_llm_call: () => ({ toolCalls: [{ id: "c1" }] }),
        before_tool_call: () => ({ params: { path: "/tmp/x" } }),
        before_tool_result: () => ({ content: [{ type: "text", text: "[checked]" }] }),
        before_response_emit: () => ({ allContent: ["A", "B", "C"] }),
      },
    });
    const checker = definePolicy({
      name: "checker",
      hooks: {
        before_tool_call: () => ({ block: true, blockReason: "checker says no" }),
        before_tool_result: () => {
          throw new Error("checker crashed");
        },
        before_llm_call: () => undefined,
      },
    });
    const candidate = definePolicy({
      name: "candidate",
      hooks: { before_response_emit: () => ({ content: "" }) },
    });
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          { name: "conform", hooks: [...MODIFYING_HOOK_NAMES], priority: 100 },
          {
            name: "checker",
            hooks: ["before_tool_call", "before_tool_result", "before_llm_call"],
            priority: 50,
            failMode: "fail-open",
          },
          { name: "candidate", hooks: ["before_response_emit"], priority: 10, mode: "shadow" },
        ],
      },
      policies: [conform, checker, candidate],
    });

    // A raw listener on everything of the namespace, and on the inboxes replies go to.
    const captured: Captured[] = [];
    const pendingDecodes: Promise<void>[] = [];
    const onMessage = (error: Error | null, msg: Msg) => {
      if (error !== null || msg.subject.includes(".blob.")) return;
      pendingDecodes.push(
        p.bus.codec
          .decodeMessage(msg)
          .then((body) => {
            captured.push({
              subject: msg.subject,
              reply: msg.reply,
              headers: msg.headers,
              data: msg.data,
              body,
            });
          })
          .catch(() => {
            // JetStream acks and API replies on _INBOX are not hookbus bodies.
          }),
      );
    };
    const raw = p.connections.reader;
    const subs = [
      raw.subscribe(`${p.namespace}.>`, { callback: onMessage }),
      raw.subscribe("_INBOX.>", { callback: onMessage }),
    ];
    await raw.flush();

    const run = { agentId: "agent.conform", sessionKey: "s 1", runId: "run-1" };
    const tool = { toolName: "read_file", toolCallId: "c1", params: { path: "a" } };
    const results = [
      await p.client.call("before_agent_reply", run, { cleanedBody: "hello" }),
      await p.client.call("before_llm_call", run, {
        messages: [{ role: "user", content: "hi" }],
        tools: [{ name: "read_file" }, { name: "exec" }],
      }),
      await p.client.call(
        "after_llm_call",
        { ...run, runId: "run-2" },
        {
          toolCalls: [
            { id: "c1", name: "read_file", arguments: {} },
            { id: "c2", type: "function", function: { name: "exec", arguments: "{}" } },
          ],
        },
      ),
      await p.client.call(
        "before_tool_call",
        { ...run, toolName: "read_file", toolCallId: "c1" },
        tool,
      ),
      await p.client.call("before_tool_result", run, { ...tool, result: "text", isError: false }),
      await p.client.call("before_response_emit", run, { content: "B", allContent: ["A", "B"] }),
    ];
    expect(results.map((r) => [r.source, r.decision.outcome])).toEqual([
      ["coordinator", "reply"],
      ["coordinator", "modify"],
      ["coordinator", "modify"],
      ["coordinator", "block"],
      ["coordinator", "modify"],
      ["coordinator", "modify"],
    ]);

    // A call the coordinator must reject (an event that fails its schema), sent raw.
    const bad = await p.bus.codec.encode({
      callId: "bad-1",
      hook: "before_tool_call",
      context: run,
      event: { toolName: "", params: {} },
    });
    const badHeaders = headers();
    badHeaders.set("Hookbus-Call-Id", "bad-1");
    badHeaders.set("Hookbus-Timeout-Ms", "5000");
    const errorReply = await raw.request(
      p.subjects.call(run.agentId, "before_tool_call"),
      bad.data,
      {
        timeout: 5000,
        headers: badHeaders,
      },
    );
    expect(errorReply.headers?.get("Hookbus-Error-Code")).toBe("HOOKBUS_INVALID_EVENT");

    // An observation goes straight to the log.
    await p.client.observe(
      "after_tool_call",
      run,
      { ...tool, result: { ok: true }, durationMs: 3, blocked: false },
      { eventId: "obs-1" },
    );

    const expectedRecords = results.length + 2;
    await until(
      () =>
        captured.filter((c) => c.subject.startsWith(`${p.namespace}.audit.`)).length >=
        expectedRecords,
      5000,
      "the log records on the wire",
    );
    await Promise.all(pendingDecodes);
    for (const sub of subs) sub.unsubscribe();

    // Classify by subject: requests first, then the replies sent to their reply subjects.
    const callRequests = captured.filter((c) => c.subject.startsWith(`${p.namespace}.call.`));
    const policyRequests = captured.filter((c) => c.subject.startsWith(`${p.namespace}.policy.`));
    const records = captured.filter((c) => c.subject.startsWith(`${p.namespace}.audit.`));
    const callReplySubjects = new Map(callRequests.map((c) => [c.reply, c]));
    const policyReplySubjects = new Map(policyRequests.map((c) => [c.reply, c]));
    const callReplies = captured.filter((c) => callReplySubjects.has(c.subject));
    const policyReplies = captured.filter((c) => policyReplySubjects.has(c.subject));

    expect(callRequests).toHaveLength(7);
    expect(callReplies).toHaveLength(7);
    // conform on 6 hooks, checker on 3, candidate on 1.
    expect(policyRequests).toHaveLength(10);
    expect(policyReplies).toHaveLength(10);
    expect(records).toHaveLength(8);

    for (const c of callRequests) {
      const body = CallRequest.parse(c.body);
      conforms("envelope/call-request.schema.json", c.body, "CallRequest");
      expect(c.subject).toBe(
        p.subjects.call(String(body.context.agentId), body.hook as ModifyingHookName),
      );
      if (body.callId === "bad-1") {
        // Sent by hand as an agent before protocol 2 sends: call id and deadline in headers.
        expect(c.headers?.get("Hookbus-Call-Id")).toBe(body.callId);
        expect(Number(c.headers?.get("Hookbus-Timeout-Ms"))).toBeGreaterThan(0);
        expect(body.timeoutMs).toBeUndefined();
        continue;
      }
      // Protocol 2: the deadline leads the body, and a plain body has no header block at all.
      expect(c.headers).toBeUndefined();
      expect(body.timeoutMs).toBeGreaterThan(0);
      expect(Buffer.from(c.data).toString("utf8")).toMatch(/^\{"timeoutMs":\d+,"callId":/);
      conforms(`hooks/${body.hook}.event.schema.json`, body.event, `${body.hook} event`);
      conforms(`hooks/${body.hook}.context.schema.json`, body.context, `${body.hook} context`);
      parseEvent(body.hook as ModifyingHookName, body.event);
      parseContext(body.hook as ModifyingHookName, body.context);
    }

    for (const c of policyRequests) {
      const body = PolicyRequest.parse(c.body);
      conforms("envelope/policy-request.schema.json", c.body, "PolicyRequest");
      const [, , policy, hook] = c.subject.split(".").slice(-4);
      expect(hook).toBe(body.hook);
      expect(["conform", "checker", "candidate"]).toContain(policy);
      if (body.policy !== undefined) expect(body.policy).toBe(policy);
      // No header repeats the body (docs/protocol.md), and since protocol 2 the deadline is in
      // it too: a plain policy request has no header block at all.
      expect(c.headers).toBeUndefined();
      expect(body.timeoutMs).toBeGreaterThan(0);
      conforms(`hooks/${body.hook}.event.schema.json`, body.event, `${body.hook} policy event`);
      conforms(
        `hooks/${body.hook}.context.schema.json`,
        body.context,
        `${body.hook} policy context`,
      );
    }

    let errorReplies = 0;
    for (const c of policyReplies) {
      const request = PolicyRequest.parse(policyReplySubjects.get(c.subject)!.body);
      const hook = request.hook as ModifyingHookName;
      const body = PolicyReply.parse(c.body);
      conforms("envelope/policy-reply.schema.json", c.body, "PolicyReply");
      if (body.policy === "conform") expect(body.version).toBe("1.0.0");
      for (const repeated of ["Hookbus-Policy", "Hookbus-Policy-Version", "Hookbus-Call-Id"])
        expect(c.headers?.get(repeated) ?? "").toBe("");
      const code = c.headers?.get("Hookbus-Error-Code") ?? "";
      if (code !== "") {
        errorReplies++;
        expect(body.error?.code).toBe(code);
        conforms("envelope/error.schema.json", body.error, "PolicyReply error");
        expect(body.verdict).toBeUndefined();
      } else if (body.verdict !== undefined && body.verdict !== null) {
        conforms(`hooks/${hook}.verdict.schema.json`, body.verdict, `${hook} verdict`);
        parseVerdict(hook, body.verdict, body.policy);
      }
    }
    expect(errorReplies).toBe(1); // checker crashed on before_tool_result

    for (const c of callReplies) {
      const request = CallRequest.parse(callReplySubjects.get(c.subject)!.body);
      const code = c.headers?.get("Hookbus-Error-Code") ?? "";
      if (request.callId === "bad-1") {
        expect(code).toBe("HOOKBUS_INVALID_EVENT");
        WireError.parse(c.body);
        conforms("envelope/error.schema.json", c.body, "error reply");
        continue;
      }
      expect(code).toBe("");
      const body = CallReply.parse(c.body);
      conforms("envelope/call-reply.schema.json", c.body, "CallReply");
      const hook = body.hook as ModifyingHookName;
      expect(body.callId).toBe(request.callId);
      conforms(`hooks/${hook}.decision.schema.json`, body.decision, `${hook} decision`);
      parseDecision(hook, body.decision);
      expect(c.headers?.get("Hookbus-Registry-Revision") ?? "").toBe("");
      // What the agent got is what crossed the wire.
      const result = results.find((r) => r.callId === body.callId)!;
      expect(result.decision).toEqual(body.decision);
      expect(result.recordSeq).toBe(body.recordSeq);
    }

    let sawShadow = false;
    let sawObservation = false;
    for (const c of records) {
      const record = LogRecord.parse(c.body);
      conforms("log-record.schema.json", c.body, `${record.kind} record`);
      expect(c.headers?.get("Hookbus-Call-Id") || undefined).toBe(
        "callId" in record ? record.callId : undefined,
      );
      if (record.kind === "observation") {
        expect(record).toMatchObject({ eventId: "obs-1", hook: "after_tool_call" });
        conforms("hooks/after_tool_call.event.schema.json", record.event, "observed event");
        conforms("hooks/after_tool_call.context.schema.json", record.context, "observed context");
        sawObservation = true;
        continue;
      }
      if (record.kind === "error") {
        expect(record).toMatchObject({ callId: "bad-1", error: { code: "HOOKBUS_INVALID_EVENT" } });
        continue;
      }
      expect(record.kind).toBe("decision");
      if (record.kind !== "decision") continue;
      conforms(`hooks/${record.hook}.decision.schema.json`, record.decision, "recorded decision");
      conforms(`hooks/${record.hook}.event.schema.json`, record.event, "recorded event");
      parseDecision(record.hook as ModifyingHookName, record.decision);
      // A recorded outcome, less what the merge added (effect), is a merge-engine input.
      for (const { effect: _effect, ...outcome } of record.outcomes)
        conforms("policy-outcome.schema.json", outcome, "recorded outcome");
      if (record.shadow !== undefined) {
        sawShadow = true;
        conforms(
          `hooks/${record.hook}.decision.schema.json`,
          record.shadow.decision,
          "shadow decision",
        );
        expect(record.shadow.changed).toBe(true);
      }
    }
    expect(sawShadow).toBe(true);
    expect(sawObservation).toBe(true);
  });
});
