/**
 * The agent SDK: one typed method per modifying hook, `observe()` for observational hooks, and
 * the after_llm_call gate.
 *
 * Every call is validated locally first (HOOKBUS_INVALID_CONTEXT / _EVENT before any network).
 * Validation is kept on the fast path too: it costs ~1-3 µs for a typical event (see
 * `measureFastPath` in bench/fast-path.ts), well inside the 10 µs budget, and skipping it would make an agent's bad
 * input pass while the registry is empty and fail the day a policy is added.
 */
import { randomUUID } from "node:crypto";
import { pino, type Logger } from "pino";
import {
  isModifyingHook,
  type Decision,
  type HookContext,
  type HookEvent,
  type ModifyingHookName,
  type ObservationalHookName,
} from "../catalog/catalog.js";
import type { HookContextInput, HookEventInput } from "../catalog/input.js";
import {
  assertHookName,
  assertModifyingHook,
  parseContext,
  parseEvent,
} from "../catalog/validate.js";
import { Bus } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import { HookbusBlockedError } from "./blocked.js";
import { beforeDeadline } from "../foundation/deadline.js";
import { AfterLlmCallGate, type GateVerdict, type RunRef } from "./gate.js";
import { NatsApprovalWaiter, type ApprovalProgressCallback } from "./approval-wait.js";
import { settleApproval } from "./approval-settle.js";
import { ObservationPublisher, type ObserveResult } from "./observer.js";
import { checkId, checkTimeout, DEFAULT_AGENT_TIMEOUT_MS } from "./options.js";
import { ALWAYS_ROUND_TRIP, WatchedRegistryView, type RegistryView } from "./registry-view.js";
import { NatsCallTransport, type CallTransport } from "./transport.js";
import { traceAgentCall } from "../observability/trace.js";
import type { ResponseStreaming } from "../registry/stream-entry.js";
import type {
  CallOptions,
  CallResult,
  HookbusClientOptions,
  HookbusClientParts,
  HookbusClientStats,
  ObservationSink,
  ObserveCallOptions,
} from "./types.js";
import { isPromise } from "../foundation/hot-path.js";

export type {
  CallOptions,
  CallResult,
  DecisionSource,
  HookbusClientOptions,
  HookbusClientParts,
  HookbusClientStats,
  ObservationSink,
  ObserveCallOptions,
} from "./types.js";

type AnyContext = Record<string, unknown> & RunRef;
type AnyEvent = Record<string, unknown>;
type AnyResult = CallResult<ModifyingHookName>;

const NO_LOG: ObservationSink = {
  publish: (hook) =>
    Promise.reject(
      new HookbusError("HOOKBUS_LOG_UNAVAILABLE", `${hook}: this client has no log to publish to`, {
        hook,
      }),
    ),
};

export class HookbusClient {
  private readonly gate = new AfterLlmCallGate();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly transport: CallTransport;
  private readonly observer: ObservationSink;
  private readonly registry: RegistryView;
  private readonly timeoutMs: number;
  private readonly logger: Logger;
  private readonly allowMissingRegistry: boolean;
  private readonly counts = { fastPath: 0, coordinator: 0, gate: 0, noRegistry: 0 };
  private closing: Promise<void> | undefined;
  /** Aborted by close(): approval waits end at once (HOOKBUS_CLIENT_CLOSED). */
  private readonly closed = new AbortController();

  private constructor(private readonly parts: HookbusClientParts) {
    this.allowMissingRegistry = parts.allowMissingRegistry === true;
    this.transport = parts.transport;
    this.observer = parts.observer ?? NO_LOG;
    this.registry = parts.registry ?? ALWAYS_ROUND_TRIP;
    this.timeoutMs = checkTimeout(parts.timeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS);
    this.logger = parts.logger ?? pino({ level: "silent" });
  }

  /** Connect to hookbus over NATS; resolves once the registry's current revision is known. */
  static async connect(options: HookbusClientOptions): Promise<HookbusClient> {
    const timeoutMs = checkTimeout(options.timeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS);
    const logger = options.logger ?? pino({ level: "silent" });
    const bus = await Bus.open(options.nc, {
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      logger,
    });
    // Watched even without a fast path: observations are redacted by the registry's rules.
    const watched = await WatchedRegistryView.start(options.nc, bus.subjects, logger, {
      ...(options.registryStaleAfterMs === undefined
        ? {}
        : { staleAfterMs: options.registryStaleAfterMs }),
    });
    const registry: RegistryView =
      options.fastPath === false
        ? {
            ...ALWAYS_ROUND_TRIP,
            missing: () => watched.missing(),
            health: () => watched.health(),
            stop: () => watched.stop(),
          }
        : watched;
    // Observations go through the coordinators, which redact and record them.
    const observer = new ObservationPublisher(bus);
    return new HookbusClient({
      transport: new NatsCallTransport(bus),
      approvals: new NatsApprovalWaiter(bus),
      namespace: bus.subjects.namespace,
      ...(options.onApproval === undefined ? {} : { onApproval: options.onApproval }),
      observer,
      registry,
      timeoutMs,
      logger,
      ...(options.allowMissingRegistry === undefined
        ? {}
        : { allowMissingRegistry: options.allowMissingRegistry }),
    });
  }

  /**
   * A client on other parts than NATS: an in-process transport, a test double, a benchmark.
   * @internal Not in the published types (`stripInternal`): its parts are internals.
   */
  static create(parts: HookbusClientParts): HookbusClient {
    return new HookbusClient(parts);
  }

  // ---- one typed method per modifying hook: they throw HookbusBlockedError on a block ----

  beforeAgentReply(
    ctx: HookContextInput<"before_agent_reply">,
    event: HookEventInput<"before_agent_reply">,
    opts?: CallOptions,
  ): Promise<Decision<"before_agent_reply">> {
    return this.enforce("before_agent_reply", ctx, event, opts);
  }

  /** Also clears the run's after_llm_call gate: a new LLM call starts a new turn. */
  beforeLlmCall(
    ctx: HookContextInput<"before_llm_call">,
    event: HookEventInput<"before_llm_call">,
    opts?: CallOptions,
  ): Promise<Decision<"before_llm_call">> {
    return this.enforce("before_llm_call", ctx, event, opts);
  }

  /**
   * Opens the run's gate before returning: `beforeToolCall`s started afterwards, even without
   * awaiting this, wait for this decision.
   */
  afterLlmCall(
    ctx: HookContextInput<"after_llm_call">,
    event: HookEventInput<"after_llm_call">,
    opts?: CallOptions,
  ): Promise<Decision<"after_llm_call">> {
    return this.enforce("after_llm_call", ctx, event, opts);
  }

  /**
   * Waits for the run's after_llm_call decision first; a call it does not allow is blocked here,
   * without a round trip. The tool call id is `event.toolCallId` (and `ctx.toolCallId`, if set:
   * both must be allowed).
   */
  beforeToolCall(
    ctx: HookContextInput<"before_tool_call">,
    event: HookEventInput<"before_tool_call">,
    opts?: CallOptions,
  ): Promise<Decision<"before_tool_call">> {
    return this.enforce("before_tool_call", ctx, event, opts);
  }

  beforeToolResult(
    ctx: HookContextInput<"before_tool_result">,
    event: HookEventInput<"before_tool_result">,
    opts?: CallOptions,
  ): Promise<Decision<"before_tool_result">> {
    return this.enforce("before_tool_result", ctx, event, opts);
  }

  beforeResponseEmit(
    ctx: HookContextInput<"before_response_emit">,
    event: HookEventInput<"before_response_emit">,
    opts?: CallOptions,
  ): Promise<Decision<"before_response_emit">> {
    return this.enforce("before_response_emit", ctx, event, opts);
  }

  /** The decision of any modifying hook; a block is returned (outcome `block`), not thrown. */
  decide<H extends ModifyingHookName>(
    hook: H,
    ctx: HookContextInput<H>,
    event: HookEventInput<H>,
    opts?: CallOptions,
  ): Promise<Decision<H>> {
    return this.call(hook, ctx, event, opts).then((result) => result.decision);
  }

  /** Like `decide`, with where the decision came from and its log record. */
  call<H extends ModifyingHookName>(
    hook: H,
    ctx: HookContextInput<H>,
    event: HookEventInput<H>,
    opts: CallOptions = {},
  ): Promise<CallResult<H>> {
    try {
      // Synchronous up to the gate: see `start`. A pending approval is waited out after.
      return this.start(hook, ctx, event, opts).then((result) =>
        settleApproval(this.parts, ctx, result, opts, this.closed.signal),
      );
    } catch (error) {
      return rejected(error);
    }
  }

  /**
   * The settled decision of a pending approval, waited for (bounded by the request's deadline):
   * for a call asked with `waitForApproval: false`, or one a previous process left pending. The
   * request must be this agent's (`HOOKBUS_APPROVAL_FORBIDDEN` otherwise) and for `callId`.
   */
  waitForApproval(
    agentId: string,
    approval: { id: string; callId: string },
    opts: { onApproval?: ApprovalProgressCallback } = {},
  ): Promise<Decision<"before_tool_call">> {
    try {
      this.assertOpen("before_tool_call");
      const waiter = this.parts.approvals;
      if (waiter === undefined)
        throw new HookbusError(
          "HOOKBUS_APPROVAL_UNRESOLVED",
          "this client has no way to wait for an approval (connect with HookbusClient.connect, or pass `approvals`)",
        );
      return waiter.wait(
        agentId,
        approval,
        opts.onApproval ?? this.parts.onApproval,
        this.closed.signal,
      );
    } catch (error) {
      return rejected(error);
    }
  }

  /**
   * Publish an observational hook's event to the log (durably, deduplicated by eventId, retried
   * until the deadline; rejects with HOOKBUS_LOG_UNAVAILABLE only then). `agent_end` also ends
   * the run's gate.
   */
  observe<H extends ObservationalHookName>(
    hook: H,
    ctx: HookContextInput<H>,
    event: HookEventInput<H>,
    opts: ObserveCallOptions = {},
  ): Promise<ObserveResult> {
    let published: Promise<ObserveResult>;
    try {
      this.assertOpen(hook);
      if (isModifyingHook(assertHookName(hook))) {
        throw new HookbusError(
          "HOOKBUS_INVALID_ARGUMENT",
          `${hook} is a modifying hook: ask for a decision (decide() or its typed method) instead of observe()`,
          { hook, argument: "hook" },
        );
      }
      const context = parseContext(hook, ctx);
      const ev = parseEvent(hook, event);
      const eventId = opts.eventId === undefined ? randomUUID() : checkId(opts.eventId, "eventId");
      const deadline = Date.now() + this.timeoutFor(opts);
      if (hook === "agent_end") this.gate.clear(context);
      published = this.observer.publish(hook, context, ev, eventId, deadline);
    } catch (error) {
      return rejected(error);
    }
    // Tracked so close() waits for it: an observation in flight is never dropped by a shutdown.
    this.pending.add(published);
    const forget = () => void this.pending.delete(published);
    published.then(forget, forget);
    return published;
  }

  /**
   * Forget a run's gate (when the run ends without `agent_end`): every agent's and session's
   * gate of the run id, or one agent's, or one agent's one session's.
   */
  endRun(runId: string, agentId?: string, sessionKey?: string): void {
    this.gate.endRun(runId, agentId, sessionKey);
  }

  /** Whether the next call of this hook would be answered locally (no policy registered). */
  isFastPath(hook: ModifyingHookName): boolean {
    return (
      this.closing === undefined &&
      (this.allowMissingRegistry || this.registry.missing?.() !== true) &&
      !this.registry.needsRoundTrip(assertModifyingHook(hook))
    );
  }

  /**
   * How a streamed final answer may show now (docs/streaming.md): `edge` while before_response_emit
   * takes the fast path, else what the registry's policies allow (`windows` or `hold`).
   */
  responseStreaming(): ResponseStreaming {
    if (this.isFastPath("before_response_emit")) return "edge";
    // Not the fast path with no policy (a stop in force, a stale view): a coordinator decides the
    // whole answer, so nothing shows before it did.
    const streaming = this.registry.responseStreaming?.() ?? "hold";
    return streaming === "edge" ? "hold" : streaming;
  }

  /** Where decisions came from so far (the fast path is not recorded: count it here). */
  stats(): HookbusClientStats {
    return {
      ...this.counts,
      registryWatch: this.registry.health?.() ?? {
        watching: false,
        restarts: 0,
        downForMs: undefined,
      },
    };
  }

  /** Calls answered `allow` locally (no policy for their hook): not recorded, so counted here. */
  get fastPathAnswers(): number {
    return this.counts.fastPath;
  }

  /** The namespace this client talks to (undefined for a client made of other parts). */
  get namespace(): string | undefined {
    return this.parts.namespace;
  }

  /**
   * The logger this client was given (silent by default): adapters log their own failures here.
   * @internal Adapters' plumbing.
   */
  get log(): Logger {
    return this.logger;
  }

  /** The registry revision the fast path currently reflects (undefined without a fast path). */
  get registryRevision(): number | undefined {
    return this.registry.revision;
  }

  /**
   * Wait for in-flight observations, stop watching the registry; calls waiting for a person's
   * approval end at once with HOOKBUS_CLIENT_CLOSED. Does not close the connection.
   */
  close(): Promise<void> {
    this.closed.abort();
    this.closing ??= (async () => {
      await Promise.allSettled([...this.pending]);
      await this.registry.stop();
      this.logger.debug("hookbus client closed");
    })();
    return this.closing;
  }

  // ---- internals ----

  private async enforce<H extends ModifyingHookName>(
    hook: H,
    ctx: HookContextInput<H>,
    event: HookEventInput<H>,
    opts?: CallOptions,
  ): Promise<Decision<H>> {
    // `call` runs synchronously up to the gate before this function first awaits.
    const result = await this.call(hook, ctx, event, opts);
    if (result.decision.outcome === "block") {
      throw new HookbusBlockedError(
        hook,
        result.decision,
        result.source === "after_llm_call_gate" ? "after_llm_call_gate" : "decision",
      );
    }
    return result.decision;
  }

  /**
   * Validate, then route. Everything up to storing the after_llm_call promise in the gate is
   * synchronous, so a beforeToolCall started on the next line finds the gate (DESIGN §2).
   */
  private start(
    hook: ModifyingHookName,
    ctx: AnyContext,
    event: AnyEvent,
    opts: CallOptions,
  ): Promise<AnyResult> {
    this.assertOpen(hook);
    assertModifyingHook(hook);
    const context = parseContext(hook, ctx) as AnyContext;
    let ev: AnyEvent;
    let callId: string | undefined;
    let deadline: number;
    try {
      ev = parseEvent(hook, event);
      callId = opts.callId === undefined ? undefined : checkId(opts.callId, "callId");
      deadline = Date.now() + this.timeoutFor(opts);
    } catch (error) {
      // An after_llm_call that cannot be asked still gates the turn's tools: fail closed.
      if (hook === "after_llm_call") this.gate.open(context, rejected(error));
      throw error;
    }

    switch (hook) {
      case "before_llm_call":
        this.gate.clear(context);
        return this.dispatch(hook, context, ev, callId, deadline);
      case "after_llm_call": {
        const result = this.dispatch(hook, context, ev, callId, deadline);
        this.gate.open(
          context,
          result.then((r) => r.decision as Decision<"after_llm_call">),
        );
        return result;
      }
      case "before_tool_call":
        return this.gatedToolCall(context, ev, callId, deadline);
      default:
        return this.dispatch(hook, context, ev, callId, deadline);
    }
  }

  private gatedToolCall(
    context: AnyContext,
    event: AnyEvent,
    callId: string | undefined,
    deadline: number,
  ): Promise<AnyResult> {
    const hook = "before_tool_call";
    const verdict = this.gate.check(
      context,
      event.toolCallId as string | undefined,
      context.toolCallId as string | undefined,
    );
    const next = (v: GateVerdict): Promise<AnyResult> | AnyResult => {
      if (v.proceed) return this.dispatch(hook, context, event, callId, deadline);
      this.counts.gate++;
      this.recordGateRefusal(context, event, v);
      return gateBlock(v, callId, this.registry.revision);
    };
    // No gate for this run: no await, no timer (the fast path stays cheap).
    if (!isPromise(verdict)) return Promise.resolve(next(verdict));
    return beforeDeadline(
      verdict,
      deadline,
      "HOOKBUS_CALL_TIMEOUT",
      () =>
        "before_tool_call: the after_llm_call decision did not arrive before this call's deadline",
      { hook, ...(callId === undefined ? {} : { callId }) },
    ).then(next);
  }

  private dispatch(
    hook: ModifyingHookName,
    context: AnyContext,
    event: AnyEvent,
    callId: string | undefined,
    deadline: number,
  ): Promise<AnyResult> {
    if (this.registry.missing?.() === true && !this.allowMissingRegistry) {
      this.counts.noRegistry++;
      return rejected(
        new HookbusError(
          "HOOKBUS_NO_REGISTRY",
          `${hook}: no registry was ever applied in this namespace, so no policy set is enforced: apply one (hookbus registry apply FILE), check the server and namespace, or pass allowMissingRegistry: true to run unchecked`,
          { hook },
        ),
      );
    }
    if (!this.registry.needsRoundTrip(hook, { context, event })) {
      this.counts.fastPath++;
      // No policy (enforce or shadow) for this hook: nothing to ask and nothing to record.
      return Promise.resolve({
        decision: { outcome: "allow", decidedBy: {} },
        source: "fast-path",
        callId,
        registryRevision: this.registry.revision,
        recordSeq: undefined,
      });
    }
    const id = callId ?? randomUUID();
    this.counts.coordinator++;
    return traceAgentCall(hook, id, () =>
      this.transport.call(
        hook,
        context as HookContext<typeof hook>,
        event as HookEvent<typeof hook>,
        id,
        deadline,
      ),
    ).then((reply) => ({
      decision: reply.decision,
      source: "coordinator" as const,
      callId: id,
      registryRevision: reply.registryRevision,
      recordSeq: reply.recordSeq,
    }));
  }

  /**
   * No coordinator decided a gate refusal, so the SDK records it: an after_tool_call observation
   * (`blocked`, `blockSource: "after_llm_call_gate"`), filed under `block` in the log, so audit
   * queries and counts see it with its reason and policy. Never delays or fails the refusal.
   */
  private recordGateRefusal(
    context: AnyContext,
    event: AnyEvent,
    verdict: Extract<GateVerdict, { proceed: false }>,
  ): void {
    const toolCallId = event.toolCallId ?? context.toolCallId;
    this.observe("after_tool_call", context as HookContextInput<"after_tool_call">, {
      toolName: event.toolName as string,
      ...(typeof toolCallId === "string" ? { toolCallId } : {}),
      params: event.params,
      blocked: true,
      blockReason: verdict.blockReason,
      ...(verdict.blockedBy === undefined ? {} : { blockedBy: verdict.blockedBy }),
      blockSource: "after_llm_call_gate",
    }).catch((error: unknown) =>
      this.logger.warn({ err: error }, "the after_llm_call gate's refusal was not recorded"),
    );
  }

  private timeoutFor(opts: { timeoutMs?: number }): number {
    return opts.timeoutMs === undefined ? this.timeoutMs : checkTimeout(opts.timeoutMs);
  }

  private assertOpen(hook: string): void {
    if (this.closing !== undefined) {
      // A closed client no longer watches the registry, so it must not answer from it either.
      throw new HookbusError("HOOKBUS_COORDINATOR_UNAVAILABLE", `${hook}: the client is closed`, {
        hook,
      });
    }
  }
}

/** A rejected promise of what was thrown (always an Error, as callers and linters expect). */
function rejected<T>(error: unknown): Promise<T> {
  return Promise.reject(
    error instanceof Error ? error : new HookbusError("HOOKBUS_INTERNAL", String(error)),
  );
}

/** The decision a gate block stands for: a before_tool_call block, as a coordinator would shape it. */
function gateBlock(
  verdict: Extract<GateVerdict, { proceed: false }>,
  callId: string | undefined,
  registryRevision: number | undefined,
): AnyResult {
  const decision: Decision<"before_tool_call"> = {
    outcome: "block",
    blockReason: verdict.blockReason,
    ...(verdict.blockedBy === undefined ? {} : { blockedBy: verdict.blockedBy }),
    decidedBy: { block: verdict.blockedBy === undefined ? [] : [verdict.blockedBy] },
  };
  return {
    decision,
    source: "after_llm_call_gate",
    callId,
    registryRevision,
    recordSeq: undefined,
  };
}
