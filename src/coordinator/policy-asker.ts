/**
 * Asks policies over NATS and keeps listening after a deadline passes, so that a verdict that
 * arrives late is still recorded ("late verdict: would have blocked") instead of vanishing into a
 * closed inbox. One wildcard inbox subscription serves every request of this coordinator.
 */
import {
  createInbox,
  headers as natsHeaders,
  type Msg,
  type NatsConnection,
  type Subscription,
} from "@nats-io/transport-node";
import { connectionInboxPrefix } from "../bus/inbox.js";
import type { Bus } from "../bus/bus.js";
import type { EncodedBody } from "../bus/codec.js";
import { spliceTimeoutMs, withDeadline, type RequestWire } from "../bus/body-deadline.js";
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
  /** What was sent, kept for asking again (ask-again.ts) until it is answered or expires. */
  wire?: RequestWire;
  /** Asked again at the half of its timeout: its worker may have vanished (askAgainIfVanished). */
  askedAgain: boolean;
  /** The server said "no responders" for it: no worker took it, none can have vanished. */
  noResponders: boolean;
}

/**
 * A worker killed while it holds an ask never answers, and NATS says nothing (no responders is
 * told only when an ask is sent). An ask still unanswered at this fraction of its timeout is
 * asked once more, with the same reply token, so another worker of the policy can decide the
 * call within the same timeout; an answer before it costs nothing (the ask's one timer is set
 * here, and only then for the rest of the timeout). docs/policy-workers.md "A worker that vanishes".
 */
export const ASK_AGAIN_AT = 0.5;
/** Below this many ms left, asking again would not leave a worker time to answer. */
export const MIN_ASK_AGAIN_MS = 25;

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
  /** The latest ask as sent, for the next ask of the same call (wireFor). */
  private lastWire: { body: EncodedBody; timeoutMs: number; wire: RequestWire } | undefined;
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
      const half = request.timeoutMs * ASK_AGAIN_AT;
      // One timer per ask: at the half when there is time to ask again then, else the timeout.
      const timer =
        request.timeoutMs - half >= MIN_ASK_AGAIN_MS
          ? setTimeout(() => this.askAgainIfVanished(token), half)
          : setTimeout(() => this.expire(token), request.timeoutMs);
      const startedAt = performance.now();
      const wire = this.wireFor(request);
      // Every field in the literal (hot path: foundation/hot-path.ts).
      const entry: Pending = {
        request,
        startedAt,
        settle: resolve,
        timer,
        wire,
        askedAgain: false,
        noResponders: false,
      };
      this.pending.set(token, entry);
      try {
        this.publish(token, request, wire);
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

  private publish(token: string, request: Omit<AskRequest, "body">, wire: RequestWire): void {
    const reply = `${this.prefix}.${token}`;
    this.bus.nc.publish(
      this.bus.subjects.policy(request.policy.name, request.hook),
      wire.data,
      // No header block at all for a plain JSON ask (its deadline is in its body).
      wire.headers === undefined ? { reply } : { reply, headers: wire.headers },
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
    if (entry.settle === undefined || entry.wire === undefined) return;
    try {
      this.publish(token, entry.request, entry.wire);
    } catch (error) {
      // Closed or draining: the ask's own timer settles it.
      this.bus.logger.debug({ err: error }, "could not ask a policy again");
    }
  }

  /**
   * Halfway through an ask's timeout with no answer: its worker may have vanished (killed with
   * the ask in hand), so it is asked once more, with the deadline that is left, and its timer
   * now runs to the end of the same timeout: never past the policy's timeout or the call's
   * budget. The first verdict wins (finish); one that comes after it finds no ask and is dropped.
   */
  private askAgainIfVanished(token: string): void {
    const entry = this.pending.get(token);
    if (entry?.settle === undefined) return;
    const left = entry.request.timeoutMs - (performance.now() - entry.startedAt);
    if (left <= 0) return this.expire(token);
    entry.timer = setTimeout(() => this.expire(token), left);
    // "No responders" already said no worker held it; a timer that fired late leaves no time.
    if (entry.noResponders || left < MIN_ASK_AGAIN_MS) return;
    if (entry.wire === undefined || !("body" in entry.request)) return;
    entry.askedAgain = true;
    entry.wire = withDeadlineLeft(entry.request.body, entry.wire, Math.floor(left));
    this.askOnceMore(token, entry);
  }

  /**
   * The policy request as sent: the shared body with this policy's deadline spliced in (a gzip
   * or blob body: in the header). The asks of one call share one body and usually one timeout,
   * so they share these bytes unless a trace propagator writes each ask's own span into headers.
   */
  private wireFor(request: AskRequest): RequestWire {
    const last = this.lastWire;
    if (last?.body === request.body && last.timeoutMs === request.timeoutMs) return last.wire;
    const wire = withDeadline(request.body, request.timeoutMs);
    this.lastWire = tracePropagates()
      ? undefined
      : { body: request.body, timeoutMs: request.timeoutMs, wire };
    return wire;
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
    delete entry.wire;
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
      // After asking again for a vanished worker, "no responders" says only that none is
      // subscribed now: the first may be draining and still answer. The ask's timer decides.
      if (entry.settle === undefined || entry.askedAgain) return;
      entry.noResponders = true;
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

/**
 * An ask as sent again with the deadline that is left: spliced into its body again, or for a
 * gzip or blob body a copy of its headers with the new `Hookbus-Timeout-Ms`. Its other headers
 * (encoding, the trace of the first ask) are kept.
 */
function withDeadlineLeft(body: EncodedBody, sent: RequestWire, timeoutMs: number): RequestWire {
  if (body.encoding === "json")
    return { data: spliceTimeoutMs(body.data, timeoutMs), headers: sent.headers };
  const copy = natsHeaders();
  for (const key of sent.headers?.keys() ?? [])
    for (const value of sent.headers!.values(key)) copy.append(key, value);
  copy.set(Header.TimeoutMs, String(timeoutMs));
  return { data: sent.data, headers: copy };
}

function wireError(code: string, message: string): WireError {
  return { code, message };
}
