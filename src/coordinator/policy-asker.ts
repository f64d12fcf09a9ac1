/**
 * Asks policies over NATS and keeps listening after a deadline passes, so that a verdict that
 * arrives late is still recorded ("late verdict: would have blocked") instead of vanishing into a
 * closed inbox. One wildcard inbox subscription serves every request of this coordinator.
 */
import {
  createInbox,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from "@nats-io/transport-node";
import { connectionInboxPrefix } from "../bus/inbox.js";
import type { Bus } from "../bus/bus.js";
import { bodyHeaders, type EncodedBody } from "../bus/codec.js";
import type { WireError } from "../bus/envelope.js";
import { policyReplyValidator } from "../bus/compiled-validators.js";
import { Header } from "../bus/headers.js";
import type { ModifyingHookName } from "../catalog/catalog.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import type { RegistryPolicy } from "../registry/document.js";
import { tracePropagates } from "../observability/trace.js";
import { AskAgain } from "./ask-again.js";
import { isPromise } from "../foundation/hot-path.js";

export interface AskRequest {
  callId: string;
  /** The call's id scoped to its agent and session (agents may share callIds): late verdicts are matched by it. */
  callKey: string;
  hook: ModifyingHookName;
  policy: RegistryPolicy;
  body: EncodedBody;
  timeoutMs: number;
}

/** A reply that came after its request had already timed out (its body is no longer kept). */
export interface LateReply {
  request: Omit<AskRequest, "body">;
  outcome: PolicyOutcomeInput;
}

interface Pending {
  request: AskRequest | Omit<AskRequest, "body">;
  startedAt: number;
  settle?: (outcome: PolicyOutcomeInput) => void;
  timer: NodeJS.Timeout;
  /** Its headers, kept for asking again (ask-again.ts) until it is answered or expires. */
  headers?: MsgHdrs;
}

/** Timed-out asks still listened to for late verdicts; beyond it the oldest is forgotten. */
export const DEFAULT_MAX_LATE_LISTENERS = 10_000;

export interface PolicyAskerOptions {
  /** Bound on timed-out asks still listened to (default 10,000). */
  maxLateListeners?: number;
  /** How long after its deadline a reply still counts as a late verdict. */
  lateWindowMs?: number;
  onLate?: (late: LateReply) => void;
}

export class PolicyAsker {
  private readonly prefix: string;
  private readonly pending = new Map<string, Pending>();
  private readonly subscription: Subscription;
  private counter = 0;
  private readonly lateWindowMs: number;
  /** Tokens of timed-out asks, oldest first (a Set keeps insertion order). */
  private readonly late = new Set<string>();
  /** The headers of the latest ask, for the next ask of the same call (headersFor). */
  private lastHeaders: { body: EncodedBody; timeoutMs: number; headers: MsgHdrs } | undefined;
  /** When an ask may have been lost (a connection moved, no responders for a moment). */
  private readonly again: AskAgain;

  constructor(
    private readonly bus: Bus,
    private readonly options: PolicyAskerOptions = {},
  ) {
    this.lateWindowMs = options.lateWindowMs ?? 60_000;
    const nc: NatsConnection = bus.nc;
    // The connection's inbox prefix (`_INBOX_<ns>.coordinator.<id>`): NATS permissions then give
    // workers only `allow_responses`, and no one but this coordinator can read its verdicts.
    this.prefix = createInbox(connectionInboxPrefix(nc));
    this.subscription = nc.subscribe(`${this.prefix}.*`, {
      callback: (error, msg) => {
        if (error === null) this.onReply(msg);
        // The asks waiting on this inbox time out by their own timers.
        else
          bus.logger.warn(
            { err: error },
            "the verdict inbox subscription failed: asks will time out (check this coordinator's NATS permissions)",
          );
      },
    });
    this.again = new AskAgain(nc, { askAgain: (before) => this.askAgain(before) });
  }

  ask(request: AskRequest): Promise<PolicyOutcomeInput> {
    const token = (++this.counter).toString(36);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.expire(token), request.timeoutMs);
      const startedAt = performance.now();
      const headers = this.headersFor(request);
      // Every field in the literal (hot path: foundation/hot-path.ts).
      const entry: Pending = {
        request,
        startedAt,
        settle: resolve,
        timer,
        headers,
      };
      this.pending.set(token, entry);
      try {
        this.publish(token, request, headers);
      } catch (error) {
        // Publishing fails only when the connection is closed or draining: the policy is unreachable.
        this.finish(
          token,
          this.outcome(
            request,
            performance.now() - entry.startedAt,
            "unavailable",
            undefined,
            wireError("HOOKBUS_POLICY_UNAVAILABLE", String(error)),
          ),
        );
      }
    });
  }

  private publish(token: string, request: AskRequest, headers: MsgHdrs): void {
    this.bus.nc.publish(
      this.bus.subjects.policy(request.policy.name, request.hook),
      request.body.data,
      {
        reply: `${this.prefix}.${token}`,
        headers,
      },
    );
  }

  /**
   * Publish again, with the same reply token, every ask still waiting for its verdict (started
   * before `before` when given): the first verdict wins (src/coordinator/ask-again.ts).
   */
  private askAgain(before?: number): void {
    for (const [token, entry] of this.pending) {
      if (before !== undefined && entry.startedAt >= before) continue;
      this.askOnceMore(token, entry);
    }
  }

  private askOnceMore(token: string, entry: Pending): void {
    if (entry.settle === undefined || entry.headers === undefined || !("body" in entry.request))
      return;
    try {
      this.publish(token, entry.request, entry.headers);
    } catch (error) {
      // Closed or draining: the ask's own timer settles it.
      this.bus.logger.debug({ err: error }, "could not ask a policy again");
    }
  }

  /**
   * The policy request's headers: the deadline (the body carries the call). The asks of one call
   * share one body and usually one timeout, so they share one set of headers unless a trace
   * propagator writes each ask's own span into them.
   */
  private headersFor(request: AskRequest): MsgHdrs {
    const last = this.lastHeaders;
    if (last?.body === request.body && last.timeoutMs === request.timeoutMs) return last.headers;
    const headers = bodyHeaders(request.body, { [Header.TimeoutMs]: String(request.timeoutMs) });
    this.lastHeaders = tracePropagates()
      ? undefined
      : { body: request.body, timeoutMs: request.timeoutMs, headers };
    return headers;
  }

  async close(): Promise<void> {
    this.again.close();
    for (const [token, entry] of this.pending) {
      clearTimeout(entry.timer);
      this.pending.delete(token);
    }
    this.late.clear();
    // Best effort on close: a closed connection has nothing to drain.
    await this.subscription.drain().catch((error: unknown) => {
      this.bus.logger.debug({ err: error }, "the verdict inbox did not drain");
    });
  }

  private expire(token: string): void {
    const entry = this.pending.get(token);
    if (entry?.settle === undefined) return;
    const { request } = entry;
    entry.settle(
      this.outcome(
        request,
        performance.now() - entry.startedAt,
        "timeout",
        undefined,
        wireError("HOOKBUS_POLICY_TIMEOUT", `no answer within ${request.timeoutMs} ms`),
      ),
    );
    delete entry.settle;
    delete entry.headers;
    // Keep listening for a while: a reply now is a late verdict worth recording. The body (up
    // to megabytes) is not needed for that.
    entry.request = {
      callId: request.callId,
      callKey: request.callKey,
      hook: request.hook,
      policy: request.policy,
      timeoutMs: request.timeoutMs,
    };
    entry.timer = setTimeout(() => this.forget(token), this.lateWindowMs);
    this.late.add(token);
    const max = this.options.maxLateListeners ?? DEFAULT_MAX_LATE_LISTENERS;
    for (const oldest of this.late) {
      if (this.late.size <= max) break;
      const gone = this.pending.get(oldest);
      if (gone !== undefined) clearTimeout(gone.timer);
      this.forget(oldest);
    }
  }

  private forget(token: string): void {
    this.pending.delete(token);
    this.late.delete(token);
  }

  private finish(token: string, outcome: PolicyOutcomeInput): void {
    const entry = this.pending.get(token);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.forget(token);
    if (entry.settle !== undefined) entry.settle(outcome);
    else this.options.onLate?.({ request: entry.request, outcome });
  }

  private onReply(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length + 1);
    const entry = this.pending.get(token);
    if (entry === undefined) return;
    const { request, startedAt } = entry;
    // A 503 status with no body: the server knows no subscriber for the policy's subject. For a
    // moment that may be a worker moving between nodes: asked again within the grace.
    if (msg.headers?.code === 503) {
      if (entry.settle === undefined) return;
      const pause = this.again.noResponders(request.policy.name);
      if (pause !== undefined) {
        setTimeout(() => {
          if (this.pending.get(token) === entry) this.askOnceMore(token, entry);
        }, pause);
        return;
      }
      this.finish(
        token,
        this.outcome(
          request,
          performance.now() - startedAt,
          "unavailable",
          undefined,
          wireError("HOOKBUS_POLICY_UNAVAILABLE", `no worker for policy "${request.policy.name}"`),
        ),
      );
      return;
    }
    const latencyMs = performance.now() - startedAt;
    this.again.answered(request.policy.name);
    void this.decodeReply(msg).then((reply) => {
      // The latency up to the reply's arrival, not its decoding: given to the literal, not spread
      // onto a copy (hot path: foundation/hot-path.ts).
      this.finish(
        token,
        this.outcome(request, latencyMs, reply.status, reply.verdict, reply.error, reply.version),
      );
    });
  }

  private async decodeReply(msg: Msg): Promise<{
    status: "ok" | "error" | "invalid";
    verdict?: unknown;
    error?: WireError;
    version?: string;
  }> {
    try {
      const now = this.bus.codec.decodeMessageNow(msg);
      const parsed = policyReplyValidator().safeParse(isPromise(now) ? await now : now);
      if (!parsed.success) throw parsed.error;
      const body = parsed.data;
      const code = msg.headers?.get(Header.ErrorCode) ?? "";
      if (code !== "" || body.error !== undefined) {
        const error = body.error ?? wireError(code, "policy reported an error");
        const status = error.code === "HOOKBUS_INVALID_VERDICT" ? "invalid" : "error";
        return { status, error, ...(body.version === undefined ? {} : { version: body.version }) };
      }
      return {
        status: "ok",
        verdict: body.verdict,
        ...(body.version === undefined ? {} : { version: body.version }),
      };
    } catch (error) {
      return {
        status: "invalid",
        error: wireError("HOOKBUS_BAD_MESSAGE", `unreadable reply: ${String(error)}`),
      };
    }
  }

  private outcome(
    request: Omit<AskRequest, "body">,
    latencyMs: number,
    status: PolicyOutcomeInput["status"],
    verdict: unknown,
    error: WireError | undefined,
    version?: string,
  ): PolicyOutcomeInput {
    const { policy } = request;
    return {
      policy: policy.name,
      ...(version === undefined ? {} : { version }),
      priority: policy.priority,
      mode: policy.mode,
      ...(policy.failMode === undefined ? {} : { failMode: policy.failMode }),
      status,
      ...(verdict === undefined ? {} : { verdict }),
      ...(error === undefined ? {} : { error }),
      latencyMs,
    };
  }
}

function wireError(code: string, message: string): WireError {
  return { code, message };
}
