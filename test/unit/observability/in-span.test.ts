/**
 * `inSpan` skips span work while nothing could see it (no tracer provider, no propagator), and
 * traces again as soon as an application registers its SDK, even after hookbus started.
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { injectTraceContext, inSpan, SpanKind } from "../../../src/observability/trace.js";

afterEach(() => {
  trace.disable();
  context.disable();
  propagation.disable();
});

describe("inSpan", () => {
  it("hands work a non-recording span and returns its result when nothing traces", async () => {
    const result = await inSpan("x", { kind: SpanKind.INTERNAL }, (span) => {
      expect(span.isRecording()).toBe(false);
      span.setAttribute("ignored", 1); // must not throw
      return Promise.resolve(42);
    });
    expect(result).toBe(42);
  });

  it("still rejects with the work's error when nothing traces", async () => {
    await expect(
      inSpan("x", { kind: SpanKind.INTERNAL }, () => Promise.reject(new Error("boom"))),
    ).rejects.toThrow("boom");
  });

  it("records spans once a provider is registered after the first untraced call", async () => {
    await inSpan("before", { kind: SpanKind.INTERNAL }, () => Promise.resolve(undefined));
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    await inSpan("after", { kind: SpanKind.SERVER }, (span) => {
      expect(span.isRecording()).toBe(true);
      return Promise.resolve();
    });
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(["after"]);
  });

  it("keeps the parent context for propagation when only a propagator is registered", async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const incoming = natsHeaders();
    incoming.set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    const parent = propagation.extract(context.active(), incoming, {
      get: (h, k) => h.get(k) || undefined,
      keys: (h) => h.keys(),
    });
    const outgoing = await inSpan("hop", { kind: SpanKind.SERVER, parent }, () =>
      Promise.resolve(injectTraceContext(natsHeaders())),
    );
    expect(outgoing.get("traceparent")).toContain("0af7651916cd43dd8448eb211c80319c");
  });
});
