/**
 * W3C trace context over NATS headers with the OpenTelemetry SDK registered (in-memory exporter):
 * one agent call is one trace, agent → coordinator → each policy ask → its worker's handler, and
 * the log append under the coordinator, each span the child of the hop that sent its message.
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMetrics, definePolicy } from "../../../src/index.js";
import { startPipeline, until, useNatsServer } from "../pipeline/harness.js";

const nats = useNatsServer();
const exporter = new InMemorySpanExporter();

beforeAll(() => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  trace.disable();
  context.disable();
  propagation.disable();
});

const ctx = { agentId: "agent-trace", sessionKey: "s-1", runId: "r-1" };
const guard = definePolicy({ name: "guard", hooks: { before_tool_call: () => undefined } });
const auditor = definePolicy({
  name: "auditor",
  hooks: { before_tool_call: () => ({ params: { audited: true } }) },
});
const registry = {
  policies: [
    { name: "guard", hooks: ["before_tool_call"], priority: 10 },
    { name: "auditor", hooks: ["before_tool_call"], priority: 5 },
  ],
};

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

describe("traces", () => {
  it("one call is one trace: agent → coordinator → each policy ask → its worker → log append", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [guard, auditor] });
    exporter.reset();
    const result = await p.client.call(
      "before_tool_call",
      ctx,
      { toolName: "ls", toolCallId: "t1", params: {} },
      { callId: "traced-call" },
    );
    expect(result.source).toBe("coordinator");
    // Spans end as each hop finishes; the agent's ends last, once the answer is back.
    const spans = await until(
      () => {
        const all = exporter.getFinishedSpans();
        return all.length >= 7 ? all : undefined;
      },
      5000,
      "seven finished spans",
    );
    const named = (name: string) => {
      const found = spans.filter((s) => s.name === name);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };
    const agent = named("hookbus.call before_tool_call");
    const coordinator = named("hookbus.coordinate before_tool_call");
    const askGuard = named("hookbus.policy.ask guard");
    const askAuditor = named("hookbus.policy.ask auditor");
    const handleGuard = named("hookbus.policy.handle guard");
    const handleAuditor = named("hookbus.policy.handle auditor");
    const append = named("hookbus.log.append");
    expect(spans).toHaveLength(7);

    const traceId = agent.spanContext().traceId;
    for (const span of spans) expect(span.spanContext().traceId, span.name).toBe(traceId);
    expect(parentOf(agent)).toBeUndefined();
    expect(parentOf(coordinator)).toBe(agent.spanContext().spanId);
    expect(parentOf(askGuard)).toBe(coordinator.spanContext().spanId);
    expect(parentOf(askAuditor)).toBe(coordinator.spanContext().spanId);
    expect(parentOf(handleGuard)).toBe(askGuard.spanContext().spanId);
    expect(parentOf(handleAuditor)).toBe(askAuditor.spanContext().spanId);
    expect(parentOf(append)).toBe(coordinator.spanContext().spanId);
    expect(coordinator.attributes["hookbus.outcome"]).toBe("modify");
    expect(append.attributes["hookbus.log.seq"]).toBe(result.recordSeq);

    // The stored record carries the trace context of its append: from the log back to the trace.
    const [stored] = await p.decisionRecords("traced-call");
    const traceparent = stored?.headers?.get("traceparent") ?? "";
    expect(traceparent).toBe(`00-${traceId}-${append.spanContext().spanId}-01`);
  });

  it("a fast-path answer opens no span and sends nothing, but is counted", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [guard, auditor] });
    exporter.reset();
    const before = p.client.fastPathAnswers;
    const result = await p.client.call("before_llm_call", ctx, {
      messages: [],
      model: "m",
      iteration: 0,
    });
    expect(result.source).toBe("fast-path");
    expect(p.client.fastPathAnswers).toBe(before + 1);
    const scraped = await agentMetrics(p.client).metrics();
    expect(scraped).toContain(`hookbus_agent_fast_path_answers_total ${before + 1}`);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
