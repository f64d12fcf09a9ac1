/**
 * Issue 30 item 5, on a real nats-server: the coordinator computes a call's facts once, and Cedar,
 * a TypeScript worker, a Python worker (hookbus-worker with this checkout's SDK) and the decision
 * record all get the same fact set. Both workers run in shadow mode and answer with the facts
 * they were handed, so the record keeps what each one saw beside what Cedar saw and what the
 * record itself says.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { definePolicy, type PolicyTools } from "../../../src/index.js";
import { CedarEvaluator, type CedarCall } from "../../../src/coordinator/cedar-evaluator.js";
import { Probe } from "../../../src/conformance/probe.js";
import { startWorkerProcess, type WorkerProcess } from "../../../src/conformance/processes.js";
import type { DecisionRecord } from "../../../src/log/record.js";
import { startPipeline, until, useNatsServer, type Pipeline } from "../pipeline/harness.js";

const HOOKBUS_WORKER = ".tools/python/bin/hookbus-worker";
const python = existsSync(HOOKBUS_WORKER);
if (!python) console.warn(`one-fact-set.test.ts: no ${HOOKBUS_WORKER}; run bash scripts/setup.sh`);

const nats = useNatsServer();

/** Never blocks: it is there to be evaluated, so the spy sees what Cedar is handed. */
const CEDAR = `
@id("never") @reason("never")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "payment" && resource.name == "no-such-tool" };
`;

const tsFacts = definePolicy({
  name: "ts-facts",
  version: "1.0.0",
  hooks: {
    before_tool_call: (_event, _context, tools: PolicyTools) => ({
      params: {
        facts: tools.facts ?? null,
        deletesRecursively: tools.facts?.tools[0]?.shell?.[0]?.deletesRecursively ?? false,
      },
    }),
  },
});

let p: Pipeline;
let worker: WorkerProcess | undefined;
const cedarSaw: CedarCall[] = [];

beforeAll(async () => {
  // Called below with the evaluator as `this`: the spy passes every call through unchanged.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const evaluate = CedarEvaluator.prototype.evaluate;
  vi.spyOn(CedarEvaluator.prototype, "evaluate").mockImplementation(function (
    this: CedarEvaluator,
    policies,
    call,
    snapshot,
  ) {
    cedarSaw.push(call);
    return evaluate.call(this, policies, call, snapshot);
  });
  p = await startPipeline(nats.url(), {
    policies: [tsFacts],
    registry: {
      policies: [
        { name: "cedar", kind: "cedar", cedar: CEDAR, hooks: ["before_tool_call"], priority: 90 },
        { name: "ts-facts", hooks: ["before_tool_call"], priority: 50, mode: "shadow" },
        ...(python
          ? [
              {
                name: "py-facts",
                hooks: ["before_tool_call" as const],
                priority: 40,
                mode: "shadow" as const,
                timeoutMs: 3000,
              },
            ]
          : []),
      ],
    },
  });
  if (!python) return;
  worker = startWorkerProcess(
    [HOOKBUS_WORKER, "test/integration/facts/fixtures/echo_facts.py:echo_facts"],
    // This checkout's SDK, not the copy the setup installed (which may predate `facts`).
    { NATS_URL: nats.url(), HOOKBUS_NAMESPACE: p.namespace, PYTHONPATH: "python/src" },
  );
  const probe = new Probe(p.bus, "py-facts");
  const ready = {
    callId: "ready",
    hook: "before_tool_call",
    context: { agentId: "probe", sessionKey: "probe" },
    event: { toolName: "noop", params: {} },
  };
  await until(
    async () =>
      (
        await probe.ask({
          hook: "before_tool_call",
          body: ready,
          timeoutMs: 1000,
          windowMs: 1000,
          stopAfter: 1,
        })
      ).some((r) => r.status === undefined),
    30_000,
    `the Python worker answers (${worker.output()})`,
  );
}, 60_000);

afterAll(async () => {
  vi.restoreAllMocks();
  worker?.signal("SIGTERM");
  if (worker !== undefined) await worker.exited;
  await p?.stop();
});

function seen(record: DecisionRecord, policy: string): Record<string, unknown> {
  const outcome = record.outcomes.find((o) => o.policy === policy);
  expect(outcome?.status, JSON.stringify(outcome)).toBe("ok");
  return (outcome?.verdict as { params: Record<string, unknown> }).params;
}

describe("one fact set per call", () => {
  it("is what Cedar, the TypeScript worker, the Python worker and the record all see", async () => {
    const context = { agentId: "agent-1", sessionKey: "facts-1", toolCallId: "t1" };
    const event = { toolName: "Bash", toolCallId: "t1", params: { command: "rm -rvf /" } };
    const decision = await p.client.decide("before_tool_call", context, event, {
      callId: "facts-call-1",
    });
    expect(decision.outcome).toBe("allow"); // nothing here enforces: the shadows only report

    const { record } = await p.decisionRecord("facts-call-1");
    const facts = record.facts;
    expect(facts?.tools[0]).toMatchObject({ name: "Bash", class: "shell" });
    const shell = facts?.tools[0]?.shell?.[0] as {
      deletesRecursively: boolean;
      targetsRoot: boolean;
    };
    expect(shell).toMatchObject({ deletesRecursively: true, targetsRoot: true });

    const cedar = cedarSaw.find((c) => c.sessionKey === "facts-1");
    expect(cedar?.facts).toEqual(facts);
    expect(seen(record, "ts-facts")).toEqual({ facts, deletesRecursively: true });
    if (python) expect(seen(record, "py-facts")).toEqual({ facts, deletesRecursively: true });
  }, 30_000);
});
