/**
 * Issue 35, on a real nats-server: a call pays for its facts only when something reads them. A
 * worker policy gets `facts` in its request only when its registry entry declares `facts: true`
 * (the bytes on the wire say so, not only the SDK); a Cedar set gets them when its text reads
 * `context.facts`; the record carries them only when they were computed for the decision.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Subscription } from "@nats-io/transport-node";
import { definePolicy, type PolicyTools } from "../../../src/index.js";
import type { DecisionRecord } from "../../../src/log/record.js";
import { startPipeline, until, useNatsServer, type Pipeline } from "../pipeline/harness.js";

const nats = useNatsServer();

/** A worker that answers with the facts its SDK handed it (null: none). */
function echo(name: string) {
  return definePolicy({
    name,
    hooks: {
      before_tool_call: (_event, _context, tools: PolicyTools) => ({
        params: { facts: tools.facts ?? null },
      }),
    },
  });
}

const worker = (name: string, facts?: boolean) => ({
  name,
  hooks: ["before_tool_call" as const],
  priority: 50,
  mode: "shadow" as const,
  ...(facts === undefined ? {} : { facts }),
});

const READS_FACTS = `
@id("no-root-delete") @reason("deletes the root")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { context.facts.deletesRecursively && context.facts.targetsRoot };
`;
/** Reads the call's words, never its facts. */
const READS_CALL = `
@id("no-payments") @reason("no payments")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "payment" && context.call.paramsText like "*refund*" };
`;

const subscriptions: Subscription[] = [];
afterEach(() => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
});

/** Every policy request body published to `policy`, decoded as a worker reads it. */
function requestsTo(p: Pipeline, policy: string): Record<string, unknown>[] {
  const seen: Record<string, unknown>[] = [];
  const sub = p.bus.nc.subscribe(p.bus.subjects.policyWildcard(policy), {
    callback: (error, msg) => {
      if (error === null)
        void p.bus.codec.decodeMessage(msg).then((b) => seen.push(b as Record<string, unknown>));
    },
  });
  subscriptions.push(sub);
  return seen;
}

/** The record's facts in clear (no test here seals them); undefined when it carries none. */
function factsOf(record: DecisionRecord) {
  if (typeof record.facts === "string") throw new Error(`sealed facts: ${record.facts}`);
  return record.facts;
}

function verdictParams(record: DecisionRecord, policy: string): Record<string, unknown> {
  const outcome = record.outcomes.find((o) => o.policy === policy);
  expect(outcome?.status, JSON.stringify(outcome)).toBe("ok");
  return (outcome?.verdict as { params: Record<string, unknown> }).params;
}

async function decideBash(p: Pipeline, callId: string, command: string) {
  const context = { agentId: "agent-1", sessionKey: callId, toolCallId: callId };
  const event = { toolName: "Bash", toolCallId: callId, params: { command } };
  const decision = await p.client.decide("before_tool_call", context, event, { callId });
  return { decision, record: (await p.decisionRecord(callId)).record };
}

describe("facts on demand", () => {
  it("go only to the workers that declare `facts: true`, and into the record", async () => {
    const p = await startPipeline(nats.url(), {
      policies: [echo("plain"), echo("wants")],
      registry: { policies: [worker("plain"), worker("wants", true), worker("off", false)] },
    });
    const plainBodies = requestsTo(p, "plain");
    const wantsBodies = requestsTo(p, "wants");
    await p.bus.nc.flush();
    const { record } = await decideBash(p, "od-1", "rm -rvf /");

    const facts = factsOf(record)!;
    expect(facts.tools[0]?.shell?.[0]).toMatchObject({ deletesRecursively: true });
    expect(verdictParams(record, "wants")).toEqual({ facts });
    expect(verdictParams(record, "plain")).toEqual({ facts: null });
    await until(() => plainBodies.length === 1 && wantsBodies.length === 1, 5000, "both bodies");
    expect(plainBodies[0]).not.toHaveProperty("facts");
    expect(wantsBodies[0]?.facts).toEqual(facts);
    // The same call otherwise: one body differs from the other by `facts` alone.
    const { facts: _sent, ...rest } = wantsBodies[0]!;
    expect(rest).toEqual(plainBodies[0]);
  }, 30_000);

  it("are not computed when no policy reads them: the record has none", async () => {
    const p = await startPipeline(nats.url(), {
      policies: [echo("plain")],
      registry: {
        policies: [
          {
            name: "words",
            kind: "cedar",
            cedar: READS_CALL,
            hooks: ["before_tool_call"],
            priority: 90,
          },
          worker("plain"),
        ],
      },
    });
    const { decision, record } = await decideBash(p, "od-2", "rm -rvf /");
    expect(decision.outcome).toBe("allow");
    expect(verdictParams(record, "plain")).toEqual({ facts: null });
    expect(record).not.toHaveProperty("facts");
  }, 30_000);

  it("are computed for a Cedar set that reads `context.facts`, which decides on them", async () => {
    const p = await startPipeline(nats.url(), {
      policies: [echo("plain")],
      registry: {
        policies: [
          {
            name: "facts",
            kind: "cedar",
            cedar: READS_FACTS,
            hooks: ["before_tool_call"],
            priority: 90,
          },
          worker("plain"),
        ],
      },
    });
    const blocked = await decideBash(p, "od-3", "sudo rm -rvf /");
    expect(blocked.decision.outcome).toBe("block");
    expect(factsOf(blocked.record)?.tools[0]?.shell?.[0]).toMatchObject({ targetsRoot: true });
    expect(verdictParams(blocked.record, "plain")).toEqual({ facts: null });

    const allowed = await decideBash(p, "od-4", "ls -la");
    expect(allowed.decision.outcome).toBe("allow");
    expect(factsOf(allowed.record)?.tools[0]?.shell?.[0]).toMatchObject({ deletes: false });
  }, 30_000);

  it("are computed for session learning: the hosts a call contacted reach the next call", async () => {
    const afterPaste = `
@id("after-paste") @reason("the session contacted paste.example")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { context.session.hosts.contains("paste.example") };
`;
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          {
            name: "hosts",
            kind: "cedar",
            cedar: afterPaste,
            hooks: ["before_tool_call"],
            priority: 90,
          },
        ],
      },
    });
    const context = { agentId: "agent-1", sessionKey: "od-learn" };
    const first = await p.client.decide(
      "before_tool_call",
      { ...context, toolCallId: "l1" },
      { toolName: "WebFetch", toolCallId: "l1", params: { url: "https://paste.example/x" } },
      { callId: "od-l1" },
    );
    expect(first.outcome).toBe("allow");
    const second = await p.client.decide(
      "before_tool_call",
      { ...context, toolCallId: "l2" },
      { toolName: "Bash", toolCallId: "l2", params: { command: "ls" } },
      { callId: "od-l2" },
    );
    expect(second.outcome).toBe("block");
  }, 30_000);
});
