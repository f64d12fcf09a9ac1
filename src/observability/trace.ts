/**
 * OpenTelemetry spans and W3C trace context over NATS headers. Everything goes through
 * `@opentelemetry/api`, which is a no-op until the user registers an SDK (a tracer provider, a
 * context manager and the W3C propagator), so hookbus costs nothing here unless traces are wanted.
 *
 * One call is one trace: agent call → coordinator handling → each policy ask → worker handler →
 * log append. Each hop that sends a message injects the active context into its headers
 * (`traceparent`/`tracestate`); each hop that receives one opens its span under the extracted one.
 */
import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";
import type { MsgHdrs } from "@nats-io/transport-node";
import { HOOKBUS_VERSION } from "./version.js";

export { SpanKind };

const setter: TextMapSetter<MsgHdrs> = {
  set: (headers, key, value) => headers.set(key, value),
};

const getter: TextMapGetter<MsgHdrs | undefined> = {
  get: (headers, key) => {
    const value = headers?.get(key);
    return value === undefined || value === "" ? undefined : value;
  },
  keys: (headers) => headers?.keys() ?? [],
};

/** Write the active trace context into outgoing headers (nothing without a propagator). */
export function injectTraceContext(headers: MsgHdrs): MsgHdrs {
  propagation.inject(context.active(), headers, setter);
  return headers;
}

/**
 * Whether a propagator that writes headers is registered. Without one (the default), a message
 * needs headers only for what hookbus itself sets, and one set of headers may serve several
 * messages.
 */
export function tracePropagates(): boolean {
  return propagation.fields().length > 0;
}

/** The trace context a received message carries (the active one when it carries none). */
export function traceContextOf(headers: MsgHdrs | undefined): Context {
  return propagation.extract(context.active(), headers, getter);
}

export interface SpanOptions {
  kind: SpanKind;
  attributes?: Attributes;
  /** Parent context; default the active one. */
  parent?: Context;
}

/** The span `work` gets when nothing traces: records nothing, like the API's own no-op spans. */
const UNTRACED_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Whether a span would be invisible: no tracer provider registered (the API's proxy has no
 * delegate) and no propagator that could carry a context onwards. Then a span, its context and
 * its attributes are pure cost (about 9 spans per decision), so `inSpan` skips them. Checked per
 * call, not cached: an application may register its SDK after hookbus started.
 */
export function untraced(): boolean {
  const provider = trace.getTracerProvider();
  return (
    provider instanceof ProxyTracerProvider &&
    provider.getDelegateTracer("hookbus", HOOKBUS_VERSION) === undefined &&
    !tracePropagates()
  );
}

/**
 * Run `work` in a new active span. The span ends when `work` settles and is marked as an error
 * when it throws; `work` may add attributes or an error status itself through the span.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  if (untraced()) return work(UNTRACED_SPAN);
  const tracer = trace.getTracer("hookbus", HOOKBUS_VERSION);
  return tracer.startActiveSpan(
    name,
    {
      kind: options.kind,
      ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
    },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: String((error as Error)?.message ?? error),
        });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** Mark the active span (if any) as failed with a hookbus error code. */
export function markSpanError(span: Span, code: string): void {
  span.setAttribute("hookbus.error_code", code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/** The agent's side of a call: the root of the call's trace (or a child of the agent's own span). */
export function traceAgentCall<T>(
  hook: string,
  callId: string,
  call: () => Promise<T>,
): Promise<T> {
  return inSpan(
    `hookbus.call ${hook}`,
    { kind: SpanKind.CLIENT, attributes: { "hookbus.hook": hook, "hookbus.call_id": callId } },
    call,
  );
}
