/**
 * One call, start to finish: validate, ask the policies of the hook in parallel within the
 * call's deadline, merge, append ONE record, and only then answer the agent.
 */
import type { Msg } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import type { CallReply, CallRequest, PolicyRequest } from "../bus/envelope.js";
import { Header } from "../bus/headers.js";
import type { Decision, HookContext, HookEvent, ModifyingHookName } from "../catalog/catalog.js";
import { assertModifyingHook, parseContext, parseEvent } from "../catalog/validate.js";
import { HookbusError } from "../foundation/errors.js";
import { isPromise, type MaybePromise } from "../foundation/hot-path.js";
import {
  type AgentRateLimiter,
  DEFAULT_LIMITS,
  callTimeoutMs,
  checkCallIds,
  type Limits,
} from "../foundation/limits.js";
import { redactRecord } from "../log/redaction.js";
import { mergeOutcomes, type MergeResult } from "../merge/merge.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import type { RegistryPolicy } from "../registry/document.js";
import { callRequestValidator } from "../bus/compiled-validators.js";
import { bodyTimeoutMs, headerTimeoutMs } from "../bus/body-deadline.js";
import type { EncodedBody } from "../bus/codec.js";
import { traced, type CallTelemetry } from "./telemetry.js";
import { recordFailure, toWireError } from "./failure-record.js";
import { replyToAgent } from "./reply.js";
import { addressOf, assertIdentity, type AgentAddress } from "./identity.js";
import { callDigest, callIdConflict, isSameCall, scopedMessageId } from "../log/message-id.js";
import type { Appended, LogWriter } from "./log-writer.js";
import type { PolicyAsker } from "./policy-asker.js";
import { withApprovalId, type ApprovalService } from "./approval-service.js";
import { buildDecisionRecord } from "../log/decision-record.js";
import type { DecisionRecord } from "../log/record.js";
import { isCedarPolicy } from "../registry/document.js";
import { askedAbout } from "./stream-window.js";
import { MemorySessionFactStore } from "../cedar/session-facts.js";
import { CedarEvaluator } from "./cedar-evaluator.js";
import type { StopListSource, StopListState } from "../registry/stops.js";
import { emergencyStopOutcome, emergencyStopReason, stopStateFor } from "./emergency-stop.js";
import {
  callFacts,
  callFactsOnDemand,
  factsOptionsOf,
  type CallFacts,
} from "../policy/call-facts.js";

export { toWireError } from "./failure-record.js";

export const DEFAULT_CALL_TIMEOUT_MS = 5000;

export interface CallHandlerDeps {
  bus: Bus;
  asker: PolicyAsker;
  writer: LogWriter;
  registry: () => RegistrySnapshot;
  /** The emergency stop list in force (registry/stops.ts); absent: no stop list is enforced. */
  stops?: StopListSource;
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
  /** Evaluates the Cedar policies in-process; default: one with session facts in memory. */
  cedar?: CedarEvaluator;
  /** The namespace encrypts: refuse blob references without a key (HOOKBUS_BLOB_UNSEALED). */
  sealedBlobsOnly?: boolean;
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

/** A call as it arrived, and what its checks learnt before one failed (for the failure record). */
interface Arrival {
  msg: Msg;
  receivedAt: Date;
  deadline: number;
  /** The registry revision the call is decided under (read once, at arrival). */
  snapshot: RegistrySnapshot;
  address: AgentAddress;
  raw: Record<string, unknown> | undefined;
  request: CallRequest | undefined;
  digest: string | undefined;
  /** The call's scoped id (late-verdict bookkeeping, approvals): agents may share callIds. */
  callKey: string | undefined;
}

/** One call past its checks (rate, body, identity, ids, schemas), on its way to a decision. */
interface AdmittedCall extends Pick<
  Arrival,
  "msg" | "receivedAt" | "deadline" | "snapshot" | "address"
> {
  callId: string;
  hook: ModifyingHookName;
  context: HookContext<ModifyingHookName>;
  event: HookEvent<ModifyingHookName>;
  agentId: string;
  sessionKey: string;
  callKey: string;
  digest: string;
  /**
   * What the call does, computed on first need and once (issue 35): a Cedar set that reads
   * `context.facts`, the workers that declare `facts: true`, session learning and the record
   * all get this one object; a call nothing reads them for never computes them.
   */
  facts: () => CallFacts;
  /** The facts when something needed them so far, else undefined. */
  computedFacts: () => CallFacts | undefined;
}

/**
 * Facts hold text of the parameters (commands, paths, URLs, recipients). A record that any
 * redaction rule changed gets its facts computed again from its redacted event and context, so
 * the facts say only what the stored record itself shows: no redacted text survives in them.
 */
export function withoutRedactedFacts(
  logged: DecisionRecord,
  snapshot: RegistrySnapshot,
): DecisionRecord {
  if (logged.facts === undefined || logged.redacted === undefined || logged.redacted.length === 0)
    return logged;
  logged.facts = callFacts(logged.hook, logged.event, logged.context, factsOptionsOf(snapshot));
  return logged;
}

/** The policy request encoded with the facts, without, or both: whichever a policy gets. */
interface RequestBodies {
  plain: EncodedBody | undefined;
  withFacts: EncodedBody | undefined;
}

/** Time kept back from the policies for writing the record and answering. */
function reserveFor(timeoutMs: number): number {
  return Math.min(250, Math.floor(timeoutMs / 4));
}

export class CallHandler {
  private readonly limits: Limits;
  private readonly cedar: CedarEvaluator;

  constructor(private readonly deps: CallHandlerDeps) {
    this.limits = deps.limits ?? DEFAULT_LIMITS;
    this.cedar = deps.cedar ?? new CedarEvaluator(new MemorySessionFactStore());
  }

  async handle(msg: Msg): Promise<void> {
    const receivedAt = new Date();
    // Every field from the start: one shape for every call, filled in as the checks pass. The
    // header's deadline (gzip and blob bodies, agents before protocol 2) or the default bounds
    // the body's decoding; a plain body's own `timeoutMs` replaces it once read (check).
    const arrival: Arrival = {
      msg,
      receivedAt,
      deadline: receivedAt.getTime() + this.timeoutMs(headerTimeoutMs(msg.headers)),
      snapshot: this.deps.registry(),
      address: addressOf(msg.subject, this.limits),
      raw: undefined,
      request: undefined,
      digest: undefined,
      callKey: undefined,
    };
    try {
      const admitted = this.admit(arrival);
      await this.decide(isPromise(admitted) ? await admitted : admitted);
    } catch (error) {
      await this.fail(arrival, error);
    } finally {
      if (arrival.callKey !== undefined) this.deps.onCallFinished?.(arrival.callKey);
    }
  }

  /** The call's deadline in ms from its arrival: as asked, else the default; capped. */
  private timeoutMs(askedMs: number | undefined): number {
    return callTimeoutMs(askedMs, DEFAULT_CALL_TIMEOUT_MS, this.limits.maxCallTimeoutMs);
  }

  /**
   * The call's checks, each once: the agent's rate, the body (decoded within the deadline), the
   * envelope, the ids' limits, the identity (the subject's agent token), the context and event
   * against the hook's schemas. What is known so far is kept on `arrival` for a failure record.
   * Synchronous unless the body must be inflated or read from blobs (hot path: foundation/hot-path.ts).
   */
  private admit(arrival: Arrival): MaybePromise<AdmittedCall> {
    const { msg, address, deadline } = arrival;
    assertWithinRate(this.deps.rateLimiter, address);
    const now = this.deps.bus.codec.decodeMessageNow(msg, {
      owner: address.agentToken,
      deadline,
      sealedBlobsOnly: this.deps.sealedBlobsOnly === true,
    });
    return isPromise(now)
      ? now.then((decoded) => this.check(arrival, decoded))
      : this.check(arrival, now);
  }

  private check(arrival: Arrival, decoded: unknown): AdmittedCall {
    const { address } = arrival;
    if (typeof decoded === "object" && decoded !== null)
      arrival.raw = decoded as Record<string, unknown>;
    // Compiled from schemas/, zod's own error when it fails (bus/compiled-validators.ts).
    const parsed = callRequestValidator().safeParse(decoded);
    if (!parsed.success) throw parsed.error;
    const request = (arrival.request = parsed.data);
    if (request.timeoutMs !== undefined)
      arrival.deadline =
        arrival.receivedAt.getTime() + this.timeoutMs(bodyTimeoutMs(request.timeoutMs));
    checkCallIds(this.limits, { callId: request.callId, context: request.context });
    assertIdentity(address, request);
    const hook = assertModifyingHook(request.hook);
    const context = parseContext(hook, request.context);
    const event = parseEvent(hook, request.event);
    const agentId = String(context.agentId);
    const sessionKey = String(context.sessionKey);
    const digest = (arrival.digest = callDigest(hook, context, event));
    const callKey = (arrival.callKey = scopedMessageId(
      "decision",
      agentId,
      sessionKey,
      request.callId,
    ));
    // Bounded by the facts modules' limits when computed: a command over one is `unparsed`.
    const onDemand = callFactsOnDemand(hook, event, context, arrival.snapshot);
    // Spelled out, not spread from `arrival` (hot path: foundation/hot-path.ts, rule 2).
    return {
      msg: arrival.msg,
      receivedAt: arrival.receivedAt,
      deadline: arrival.deadline,
      snapshot: arrival.snapshot,
      address,
      callId: request.callId,
      hook,
      context,
      event,
      agentId,
      sessionKey,
      callKey,
      digest,
      facts: onDemand.facts,
      computedFacts: onDemand.computed,
    };
  }

  /** A coded answer for the agent, and a record of the failure unless the log itself failed. */
  private async fail(arrival: Arrival, error: unknown): Promise<void> {
    const { bus } = this.deps;
    const { msg, address, raw } = arrival;
    const wire = toWireError(error);
    if (wire.code === "HOOKBUS_INTERNAL") bus.logger.error({ err: error }, "call failed");
    if (wire.code !== "HOOKBUS_LOG_UNAVAILABLE") {
      await recordFailure(
        { ...this.deps, limits: this.limits },
        {
          msg,
          address,
          body: raw === undefined ? undefined : { ...raw, id: raw.callId },
          digest: arrival.digest,
          error: wire,
          snapshot: arrival.snapshot,
          receivedAt: arrival.receivedAt,
          deadline: arrival.deadline,
        },
      );
    }
    this.deps.telemetry?.answered(arrival.request?.hook, "error", arrival.receivedAt);
    await replyToAgent(bus, msg, wire, { [Header.ErrorCode]: wire.code }, address.agentId);
  }

  private async decide(call: AdmittedCall): Promise<void> {
    // A stopped agent or tool: decided here, before any worker is asked (docs/operations.md). A
    // stale list is read again within the call's deadline, less the time to record and answer.
    const reserve = reserveFor(call.deadline - call.receivedAt.getTime());
    const checked = stopStateFor(this.deps.stops, call.deadline - reserve);
    const stops = isPromise(checked) ? await checked : checked;
    const stopped = emergencyStopReason(stops, call);
    const asked =
      stopped === undefined ? this.askPolicies(call) : [emergencyStopOutcome(call.hook, stopped)];
    const outcomes = isPromise(asked) ? await asked : asked;
    // The asker built every outcome itself (registry fields, validated reply parts); only the
    // verdicts crossed the network, and the merge validates those against the hook's schema.
    const result = mergeOutcomes(call.hook, call.event, outcomes, {
      ownOutcomes: true,
    });
    result.decision = withApprovalId(result.decision, call.callKey);
    const appended = await this.record(call, result, outcomes, stops);
    const answer = this.answerFor(call, result.decision, appended, stopped);
    if (answer.decision.outcome === "pending_approval")
      await this.openApproval(call, answer.decision, appended.seq);
    // Before the answer: the session's next call must see what this one taught (docs/cedar.md).
    // Once per recorded call: a re-sent call (a duplicate) taught it when it was recorded.
    const learnt = appended.duplicate
      ? undefined
      : this.cedar.decided(call, answer.decision, call.snapshot.vocabulary);
    if (learnt !== undefined) await learnt;
    const reply: CallReply = {
      callId: call.callId,
      hook: call.hook,
      decision: answer.decision,
      registryRevision: answer.registryRevision,
      recordSeq: appended.seq,
    };
    this.deps.telemetry?.answered(call.hook, answer.decision.outcome, call.receivedAt);
    // No header repeats the body (registryRevision is in it).
    await replyToAgent(this.deps.bus, call.msg, reply, {}, call.agentId);
  }

  /**
   * Every policy of the hook: Cedar sets evaluated here, workers asked in parallel, each within
   * its timeout and the call's budget. A hook with only Cedar policies makes no round trip.
   */
  private askPolicies(call: AdmittedCall): PolicyOutcomeInput[] | Promise<PolicyOutcomeInput[]> {
    const all = askedAbout(call.snapshot.policiesFor(call.hook), call.event);
    if (!all.some(isCedarPolicy)) return this.askWorkers(call, all);
    return this.askBoth(call, all.filter(isCedarPolicy), all);
  }

  /** Cedar sets and workers side by side, the Cedar outcomes first. */
  private async askBoth(
    call: AdmittedCall,
    cedar: readonly (RegistryPolicy & { cedar: string })[],
    all: readonly RegistryPolicy[],
  ): Promise<PolicyOutcomeInput[]> {
    const workers = all.filter((p) => !isCedarPolicy(p));
    const evaluated = this.cedar.evaluate(cedar, call, call.snapshot);
    // Started now (after the Cedar side, as before); a synchronous failure becomes a rejection
    // beside the Cedar promise, so Promise.all still handles that one whatever it does.
    const asking = (async () => this.askWorkers(call, workers))();
    const [declared, asked] = await Promise.all([evaluated, asking]);
    return declared.length === 0 ? asked : [...declared, ...asked];
  }

  /**
   * Not async: its promise is Promise.all's own (an async wrapper around a returned promise adds
   * a promise and three microtask turns per call). Asynchronous only when the body needs a blob.
   */
  private askWorkers(
    call: AdmittedCall,
    policies: readonly RegistryPolicy[],
  ): PolicyOutcomeInput[] | Promise<PolicyOutcomeInput[]> {
    if (policies.length === 0) return [];
    const { hook, callId, context, event, deadline } = call;
    const budget = Math.max(
      1,
      deadline - Date.now() - reserveFor(deadline - call.receivedAt.getTime()),
    );
    this.deps.onCallStarted?.(call.callKey, context, event, call.snapshot);
    // At most two bodies per call, each encoded (and a large one stored as a blob) once: with the
    // facts for the policies that declare `facts: true`, without for the others (issue 35).
    const codec = this.deps.bus.codec;
    const plain = policies.some((p) => p.facts !== true)
      ? codec.encodeNow({ callId, hook, context, event } satisfies PolicyRequest, { deadline })
      : undefined;
    const withFacts = policies.some((p) => p.facts === true)
      ? codec.encodeNow(
          { callId, hook, context, event, facts: call.facts() } satisfies PolicyRequest,
          { deadline },
        )
      : undefined;
    if (isPromise(plain) || isPromise(withFacts))
      return Promise.all([plain, withFacts]).then(([p, f]) =>
        this.askEach(call, policies, { plain: p, withFacts: f }, budget),
      );
    return this.askEach(call, policies, { plain, withFacts }, budget);
  }

  /** Every worker policy in parallel, each within its timeout and the call's budget. */
  private askEach(
    call: AdmittedCall,
    policies: readonly RegistryPolicy[],
    bodies: RequestBodies,
    budget: number,
  ): Promise<PolicyOutcomeInput[]> {
    const { asker } = this.deps;
    const { hook, callId, callKey } = call;
    const telemetry = traced(this.deps.telemetry);
    return Promise.all(
      policies.map((policy) =>
        telemetry.askPolicy(policy.name, hook, () =>
          asker.ask({
            callId,
            callKey,
            hook,
            policy,
            // Encoded above for every policy that gets it: one of the two is there.
            body: (policy.facts === true ? bodies.withFacts : bodies.plain)!,
            timeoutMs: Math.min(policy.timeoutMs, budget),
          }),
        ),
      ),
    );
  }

  /** ONE record per call, redacted for the log only, stored before the agent hears anything. */
  private record(
    call: AdmittedCall,
    result: MergeResult<ModifyingHookName>,
    outcomes: PolicyOutcomeInput[],
    stops: StopListState | undefined,
  ): Promise<Appended> {
    const { bus, writer } = this.deps;
    const record = buildDecisionRecord({
      callId: call.callId,
      hook: call.hook,
      context: call.context,
      event: call.event,
      result,
      outcomes,
      callDigest: call.digest,
      registryRevision: call.snapshot.revision,
      stopsRevision: stops?.readable === true ? stops.list.revision : undefined,
      // Only when computed for this decision: replay and `policy test` compute them anyway.
      facts: call.computedFacts(),
      receivedAt: call.receivedAt,
      decidedAt: new Date(),
      coordinator: this.deps.coordinatorId,
    });
    const { agentId, sessionKey } = call;
    const subject = bus.subjects.audit(agentId, sessionKey, call.hook, result.decision.outcome);
    // Redaction is for the log only: the agent gets the decision as the policies made it.
    const logged = withoutRedactedFacts(
      redactRecord(record, call.snapshot.document.redact, { key: this.deps.redactionKey }),
      call.snapshot,
    );
    const msgID = scopedMessageId("decision", agentId, sessionKey, call.callId);
    return traced(this.deps.telemetry).appendLog(() =>
      writer.append(subject, logged, msgID, call.deadline),
    );
  }

  /**
   * What the agent is told: the fresh decision, or, when the log already held this call (a
   * retry), the recorded one. The id is taken in this agent's session: only the same call again
   * may be answered with what was recorded; any other call under that id is refused (and recorded).
   * A call recorded before an emergency stop keeps its recorded decision (the agent may have acted
   * on it already; the log must match what it was told): its record's `stopsRevision` predates
   * the stop, and the coordinator logs the answer.
   */
  private answerFor(
    call: AdmittedCall,
    fresh: Decision<ModifyingHookName>,
    appended: Appended,
    stopped: string | undefined,
  ): { decision: Decision<ModifyingHookName>; registryRevision: number } {
    const stored = appended.stored;
    if (!appended.duplicate || stored === undefined)
      return { decision: fresh, registryRevision: call.snapshot.revision };
    if (stored.kind !== "decision" || !isSameCall(stored, call.digest)) {
      throw callIdConflict("callId", call.callId, appended.seq);
    }
    if (stored.redacted?.some((r) => r.path.startsWith("/decision/")) === true) {
      // Redaction changed the recorded decision: the fresh one is the only unredacted answer.
      this.deps.bus.logger.warn(
        { callId: call.callId, seq: appended.seq },
        "retried call: the recorded decision is redacted, answering the fresh decision",
      );
      return { decision: fresh, registryRevision: call.snapshot.revision };
    }
    if (stopped !== undefined)
      this.deps.bus.logger.warn(
        { callId: call.callId, seq: appended.seq, stopsRevision: stored.stopsRevision, stopped },
        "re-sent call answered with the decision recorded before the emergency stop",
      );
    return {
      decision: stored.decision as Decision<ModifyingHookName>,
      registryRevision: stored.registryRevision,
    };
  }

  /** A pending approval is durable before the agent hears of it (a re-sent call finds it again). */
  private async openApproval(
    call: AdmittedCall,
    decision: Decision<ModifyingHookName>,
    decisionSeq: number,
  ): Promise<void> {
    if (this.deps.approvals === undefined)
      throw new HookbusError("HOOKBUS_INTERNAL", "a pending approval without an approval service");
    await this.deps.approvals.open({
      callKey: call.callKey,
      callId: call.callId,
      context: call.context,
      callDigest: call.digest,
      decision,
      event: call.event,
      decisionSeq,
    });
  }
}
