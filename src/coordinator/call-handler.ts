/**
 * One call, start to finish: validate, ask the policies of the hook in parallel within the
 * call's deadline, merge, append ONE record, and only then answer the agent.
 */
import type { Msg } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import type { CallReply, CallRequest, PolicyRequest } from "../bus/envelope.js";
import { Header } from "../bus/headers.js";
import type { HookEvent, ModifyingHookName } from "../catalog/catalog.js";
import { assertModifyingHook, parseContext, parseEvent } from "../catalog/validate.js";
import { HookbusError } from "../foundation/errors.js";
import {
  type AgentRateLimiter,
  DEFAULT_LIMITS,
  callTimeoutMs,
  checkCallIds,
  type Limits,
} from "../foundation/limits.js";
import { redactRecord } from "../log/redaction.js";
import { mergeOutcomes } from "../merge/merge.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import { callRequestValidator } from "../bus/compiled-validators.js";
import { traced, type CallTelemetry } from "./telemetry.js";
import { recordFailure, toWireError } from "./failure-record.js";
import { replyToAgent } from "./reply.js";
import { addressOf, assertIdentity, type AgentAddress } from "./identity.js";
import { callDigest, callIdConflict, isSameCall, scopedMessageId } from "../log/message-id.js";
import type { LogWriter } from "./log-writer.js";
import type { PolicyAsker } from "./policy-asker.js";
import { withApprovalId, type ApprovalService } from "./approval-service.js";
import { buildDecisionRecord } from "../log/decision-record.js";

export { toWireError } from "./failure-record.js";

export const DEFAULT_CALL_TIMEOUT_MS = 5000;

export interface CallHandlerDeps {
  bus: Bus;
  asker: PolicyAsker;
  writer: LogWriter;
  registry: () => RegistrySnapshot;
  coordinatorId: string;
  /** Key of keyed hashes of redaction rules (HOOKBUS_REDACTION_KEY); absent: plain sha256. */
  redactionKey?: string | undefined;
  /** Told when policies are about to be asked, and when the call is answered (late-verdict bookkeeping). */
  onCallStarted?: (
    callKey: string,
    context: Record<string, unknown>,
    event: unknown,
    snapshot: RegistrySnapshot,
  ) => void;
  onCallFinished?: (callKey: string) => void;
  /** Metrics and spans of the call's steps (src/observability). */
  telemetry?: CallTelemetry;
  /** Limits on calls (docs/limits.md); default DEFAULT_LIMITS. */
  limits?: Limits;
  /** The per-agent rate limit shared by this coordinator's call and observe handlers. */
  rateLimiter?: AgentRateLimiter;
  /** Opens the request of a pending_approval decision (src/coordinator/approval-service.ts). */
  approvals?: ApprovalService;
}

/** Refuse an agent over its rate limit (before its body is even decoded). */
export function assertWithinRate(
  limiter: AgentRateLimiter | undefined,
  address: AgentAddress,
): void {
  if (limiter === undefined || limiter.take(address.agentToken)) return;
  throw new HookbusError(
    "HOOKBUS_RATE_LIMITED",
    `agent ${address.agentId ?? address.agentToken.slice(0, 64)} is over its rate limit`,
    { agentId: address.agentId },
  );
}

/** Time kept back from the policies for writing the record and answering. */
function reserveFor(timeoutMs: number): number {
  return Math.min(250, Math.floor(timeoutMs / 4));
}

export class CallHandler {
  private readonly limits: Limits;

  constructor(private readonly deps: CallHandlerDeps) {
    this.limits = deps.limits ?? DEFAULT_LIMITS;
  }

  async handle(msg: Msg): Promise<void> {
    const receivedAt = new Date();
    const { limits } = this;
    const timeoutMs = callTimeoutMs(
      msg.headers?.get(Header.TimeoutMs),
      DEFAULT_CALL_TIMEOUT_MS,
      limits.maxCallTimeoutMs,
    );
    const deadline = receivedAt.getTime() + timeoutMs;
    const { bus } = this.deps;
    const snapshot = this.deps.registry();
    const address = addressOf(msg.subject, limits);

    let raw: Record<string, unknown> | undefined;
    let request: CallRequest | undefined;
    let digest: string | undefined;
    // Late-verdict bookkeeping is keyed by the call's scoped id: agents may share callIds.
    let callKey: string | undefined;
    try {
      assertWithinRate(this.deps.rateLimiter, address);
      const now = bus.codec.decodeMessageNow(msg, { owner: address.agentToken, deadline });
      const decoded: unknown = now instanceof Promise ? await now : now;
      raw = typeof decoded === "object" && decoded !== null ? (decoded as typeof raw) : undefined;
      // Compiled from schemas/, zod's own error when it fails (src/validation).
      const parsed = callRequestValidator().safeParse(decoded);
      if (!parsed.success) throw parsed.error;
      request = parsed.data;
      checkCallIds(limits, { callId: request.callId, context: request.context });
      assertIdentity(address, request);
      const hook = assertModifyingHook(request.hook);
      const context = parseContext(hook, request.context);
      const event = parseEvent(hook, request.event);
      digest = callDigest(hook, context, event);
      callKey = scopedMessageId(
        "decision",
        String(context.agentId),
        String(context.sessionKey),
        request.callId,
      );
      await this.decide(
        msg,
        { ...request, hook, context, event },
        callKey,
        digest,
        snapshot,
        receivedAt,
        deadline,
      );
    } catch (error) {
      const wire = toWireError(error);
      if (wire.code === "HOOKBUS_INTERNAL") bus.logger.error({ err: error }, "call failed");
      if (wire.code !== "HOOKBUS_LOG_UNAVAILABLE") {
        await recordFailure(
          { ...this.deps, limits },
          {
            msg,
            address,
            body: raw === undefined ? undefined : { ...raw, id: raw.callId },
            digest,
            error: wire,
            snapshot,
            receivedAt,
            deadline,
          },
        );
      }
      this.deps.telemetry?.answered(request?.hook, "error", receivedAt);
      await replyToAgent(
        this.deps.bus,
        msg,
        wire,
        { [Header.ErrorCode]: wire.code },
        address.agentId,
      );
    } finally {
      if (callKey !== undefined) this.deps.onCallFinished?.(callKey);
    }
  }

  private async decide(
    msg: Msg,
    call: CallRequest & { hook: ModifyingHookName },
    callKey: string,
    digest: string,
    snapshot: RegistrySnapshot,
    receivedAt: Date,
    deadline: number,
  ): Promise<void> {
    const { bus, asker, writer } = this.deps;
    const { hook, callId, context } = call;
    const agentId = String(context.agentId);
    const sessionKey = String(context.sessionKey);
    const policies = snapshot.policiesFor(hook);
    const budget = Math.max(1, deadline - Date.now() - reserveFor(deadline - receivedAt.getTime()));

    let outcomes: PolicyOutcomeInput[] = [];
    if (policies.length > 0) {
      this.deps.onCallStarted?.(callKey, context, call.event, snapshot);
      // One body for every policy: a large event is encoded (and stored as a blob) once per call.
      const encoding = bus.codec.encodeNow(
        { callId, hook, context, event: call.event } satisfies PolicyRequest,
        { deadline },
      );
      const body = encoding instanceof Promise ? await encoding : encoding;
      outcomes = await Promise.all(
        policies.map((policy) =>
          traced(this.deps.telemetry).askPolicy(policy.name, hook, () =>
            asker.ask({
              callId,
              callKey,
              hook,
              policy,
              body,
              timeoutMs: Math.min(policy.timeoutMs, budget),
            }),
          ),
        ),
      );
    }
    // The asker built every outcome itself (registry fields, validated reply parts); only the
    // verdicts crossed the network, and the merge validates those against the hook's schema.
    const result = mergeOutcomes(hook, call.event as HookEvent<typeof hook>, outcomes, {
      ownOutcomes: true,
    });
    result.decision = withApprovalId(result.decision, callKey);
    const record = buildDecisionRecord({
      callId,
      hook,
      context,
      event: call.event,
      result,
      outcomes,
      callDigest: digest,
      registryRevision: snapshot.revision,
      receivedAt,
      decidedAt: new Date(),
      coordinator: this.deps.coordinatorId,
    });
    const subject = bus.subjects.audit(agentId, sessionKey, hook, result.decision.outcome);
    // Redaction is for the log only: the agent gets the decision as the policies made it.
    const logged = redactRecord(record, snapshot.document.redact, { key: this.deps.redactionKey });
    const msgID = scopedMessageId("decision", agentId, sessionKey, callId);
    const appended = await traced(this.deps.telemetry).appendLog(() =>
      writer.append(subject, logged, msgID, deadline),
    );
    let decision = result.decision;
    let registryRevision = snapshot.revision;
    const stored = appended.stored;
    if (appended.duplicate && stored !== undefined) {
      // The id is taken in this agent's session. Only the same call again (a retry) may be
      // answered with what was recorded; any other call under that id is refused, and recorded.
      if (stored.kind !== "decision" || !isSameCall(stored, digest)) {
        throw callIdConflict("callId", callId, appended.seq);
      }
      if (stored.redacted?.some((r) => r.path.startsWith("/decision/")) === true) {
        // Redaction changed the recorded decision: the fresh one is the only unredacted answer.
        bus.logger.warn(
          { callId, seq: appended.seq },
          "retried call: the recorded decision is redacted, answering the fresh decision",
        );
      } else {
        decision = stored.decision as typeof decision;
        registryRevision = stored.registryRevision;
      }
    }
    if (decision.outcome === "pending_approval") {
      // The request is durable before the agent hears of it (a re-sent call finds it again).
      if (this.deps.approvals === undefined)
        throw new HookbusError(
          "HOOKBUS_INTERNAL",
          "a pending approval without an approval service",
        );
      await this.deps.approvals.open({
        callKey,
        callId,
        context,
        callDigest: digest,
        decision: decision,
        event: call.event,
        decisionSeq: appended.seq,
      });
    }
    const reply: CallReply = { callId, hook, decision, registryRevision, recordSeq: appended.seq };
    this.deps.telemetry?.answered(hook, decision.outcome, receivedAt);
    // No header repeats the body (registryRevision is in it).
    await replyToAgent(this.deps.bus, msg, reply, {}, agentId);
  }
}
