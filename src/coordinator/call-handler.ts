/**
 * One call, start to finish: validate, ask the policies of the hook in parallel within the
 * call's deadline, merge, append ONE record, and only then answer the agent.
 */
import type { Msg } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import { bodyHeaders } from "../bus/codec.js";
import {
  CallRequest,
  type CallReply,
  type PolicyRequest,
  type WireError,
} from "../bus/envelope.js";
import { Header } from "../bus/headers.js";
import { decodeToken } from "../bus/tokens.js";
import { isHookName, type HookEvent, type ModifyingHookName } from "../catalog/catalog.js";
import { assertModifyingHook, parseContext, parseEvent } from "../catalog/validate.js";
import { HookbusError, isHookbusError } from "../errors.js";
import type { DecisionRecord, ErrorRecord, RecordedOutcome } from "../log/record.js";
import { redactRecord } from "../log/redaction.js";
import { mergeOutcomes, type MergeResult } from "../merge/merge.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import type { LogWriter } from "./log-writer.js";
import type { PolicyAsker } from "./policy-asker.js";

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
    callId: string,
    context: Record<string, unknown>,
    event: unknown,
    snapshot: RegistrySnapshot,
  ) => void;
  onCallFinished?: (callId: string) => void;
}

/** Time kept back from the policies for writing the record and answering. */
function reserveFor(timeoutMs: number): number {
  return Math.min(250, Math.floor(timeoutMs / 4));
}

export function recordedOutcomes(
  result: MergeResult<ModifyingHookName>,
  raw: readonly PolicyOutcomeInput[],
): RecordedOutcome[] {
  const byPolicy = new Map(raw.map((o) => [o.policy, o]));
  return result.policies.map((evaluation) => {
    const source = byPolicy.get(evaluation.policy);
    const error = evaluation.error ?? source?.error;
    return {
      policy: evaluation.policy,
      ...(evaluation.version === undefined ? {} : { version: evaluation.version }),
      priority: evaluation.priority,
      mode: evaluation.mode,
      failMode: evaluation.failMode,
      status: evaluation.status,
      effect: evaluation.effect,
      ...(source?.verdict === undefined ? {} : { verdict: source.verdict }),
      ...(error === undefined ? {} : { error: { code: error.code, message: error.message } }),
      latencyMs: Math.round((source?.latencyMs ?? 0) * 1000) / 1000,
    };
  });
}

export class CallHandler {
  constructor(private readonly deps: CallHandlerDeps) {}

  async handle(msg: Msg): Promise<void> {
    const receivedAt = new Date();
    const timeoutHeader = Number(msg.headers?.get(Header.TimeoutMs));
    const timeoutMs =
      Number.isFinite(timeoutHeader) && timeoutHeader > 0 ? timeoutHeader : DEFAULT_CALL_TIMEOUT_MS;
    const deadline = receivedAt.getTime() + timeoutMs;
    const { bus } = this.deps;
    const snapshot = this.deps.registry();

    let request: CallRequest | undefined;
    try {
      request = CallRequest.parse(await bus.codec.decodeMessage(msg));
      const hook = assertModifyingHook(request.hook);
      const context = parseContext(hook, request.context);
      const event = parseEvent(hook, request.event);
      await this.decide(msg, { ...request, hook, context, event }, snapshot, receivedAt, deadline);
    } catch (error) {
      await this.fail(msg, request, error, snapshot, receivedAt, deadline);
    } finally {
      if (request !== undefined) this.deps.onCallFinished?.(request.callId);
    }
  }

  private async decide(
    msg: Msg,
    call: CallRequest & { hook: ModifyingHookName },
    snapshot: RegistrySnapshot,
    receivedAt: Date,
    deadline: number,
  ): Promise<void> {
    const { bus, asker, writer } = this.deps;
    const { hook, callId, context } = call;
    const policies = snapshot.policiesFor(hook);
    const budget = Math.max(1, deadline - Date.now() - reserveFor(deadline - receivedAt.getTime()));

    let outcomes: PolicyOutcomeInput[] = [];
    if (policies.length > 0) {
      this.deps.onCallStarted?.(callId, context, call.event, snapshot);
      // One body for every policy: a large event is encoded (and stored as a blob) once per call.
      const body = await bus.codec.encode({
        callId,
        hook,
        context,
        event: call.event,
      } satisfies PolicyRequest);
      outcomes = await Promise.all(
        policies.map((policy) =>
          asker.ask({ callId, hook, policy, body, timeoutMs: Math.min(policy.timeoutMs, budget) }),
        ),
      );
    }
    const result = mergeOutcomes(hook, call.event as HookEvent<typeof hook>, outcomes);
    const record: DecisionRecord = {
      v: 1,
      kind: "decision",
      callId,
      hook,
      context,
      event: call.event,
      outcomes: recordedOutcomes(result, outcomes),
      decision: result.decision,
      ...(result.shadow === undefined ? {} : { shadow: result.shadow }),
      registryRevision: snapshot.revision,
      receivedAt: receivedAt.toISOString(),
      decidedAt: new Date().toISOString(),
      coordinator: this.deps.coordinatorId,
    };
    const subject = bus.subjects.audit(
      String(context.agentId),
      String(context.sessionKey),
      hook,
      result.decision.outcome,
    );
    // Redaction is for the log only: the agent gets the decision as the policies made it.
    const logged = redactRecord(record, snapshot.document.redact, { key: this.deps.redactionKey });
    const appended = await writer.append(subject, logged, `decision.${callId}`, deadline);
    let decision = result.decision;
    let registryRevision = snapshot.revision;
    const stored = appended.stored;
    if (stored !== undefined && stored.kind === "decision") {
      // The agent retried a call the log already holds: answer what was recorded, not a new
      // decision, unless redaction changed the recorded decision (then the fresh one is the
      // only unredacted answer there is).
      if (stored.redacted?.some((r) => r.path.startsWith("/decision/")) === true) {
        bus.logger.warn(
          { callId, seq: appended.seq },
          "retried call: the recorded decision is redacted, answering the fresh decision",
        );
      } else {
        decision = stored.decision as typeof decision;
        registryRevision = stored.registryRevision;
      }
    }
    const reply: CallReply = { callId, hook, decision, registryRevision, recordSeq: appended.seq };
    await this.respond(msg, reply, { [Header.RegistryRevision]: String(registryRevision) });
  }

  private async fail(
    msg: Msg,
    request: CallRequest | undefined,
    error: unknown,
    snapshot: RegistrySnapshot,
    receivedAt: Date,
    deadline: number,
  ): Promise<void> {
    const { bus, writer } = this.deps;
    const wire = toWireError(error);
    if (wire.code === "HOOKBUS_INTERNAL") bus.logger.error({ err: error }, "call failed");
    if (wire.code !== "HOOKBUS_LOG_UNAVAILABLE") {
      // A rejected call is still an interception the agent saw: record it (best effort within the deadline).
      const context: Record<string, unknown> = request?.context ?? {};
      const agentId =
        typeof context.agentId === "string" && context.agentId !== ""
          ? context.agentId
          : agentFromSubject(msg.subject);
      const sessionKey =
        typeof context.sessionKey === "string" && context.sessionKey !== ""
          ? context.sessionKey
          : "(unknown)";
      const callId =
        request?.callId ??
        msg.headers?.get(Header.CallId) ??
        `unidentified.${receivedAt.getTime()}`;
      const hookToken = request?.hook ?? msg.subject.split(".").pop() ?? "unknown";
      const record: ErrorRecord = {
        v: 1,
        kind: "error",
        callId,
        hook: hookToken,
        context,
        ...(request?.event === undefined ? {} : { event: request.event }),
        error: wire,
        registryRevision: snapshot.revision,
        receivedAt: receivedAt.toISOString(),
        coordinator: this.deps.coordinatorId,
      };
      const subject = bus.subjects.audit(
        agentId,
        sessionKey,
        isHookName(hookToken) ? hookToken : "unknown",
        "error",
      );
      const logged = redactRecord(record, snapshot.document.redact, {
        key: this.deps.redactionKey,
      });
      await writer
        .append(subject, logged, `error.${callId}`, Math.max(deadline, Date.now() + 1000))
        .catch((e: unknown) => {
          bus.logger.error({ err: e, callId }, "could not record a failed call");
        });
    }
    await this.respond(msg, wire, { [Header.ErrorCode]: wire.code });
  }

  private async respond(msg: Msg, body: unknown, extra: Record<string, string>): Promise<void> {
    if (msg.reply === undefined || msg.reply === "") return;
    const encoded = await this.deps.bus.codec.encode(body);
    msg.respond(encoded.data, { headers: bodyHeaders(encoded, extra) });
  }
}

/** The agent token of `<ns>.call.<agent>.<hook>`, decoded (used when the body was unreadable). */
function agentFromSubject(subject: string): string {
  const token = subject.split(".").at(-2);
  try {
    return token === undefined || token === "" ? "(unknown)" : decodeToken(token);
  } catch {
    return "(unknown)";
  }
}

export function toWireError(error: unknown): WireError {
  if (isHookbusError(error)) return error.toJSON();
  if (error instanceof Error && error.name === "ZodError") {
    return new HookbusError("HOOKBUS_BAD_MESSAGE", `malformed call: ${error.message}`).toJSON();
  }
  return new HookbusError(
    "HOOKBUS_INTERNAL",
    `coordinator: ${String((error as Error)?.message ?? error)}`,
  ).toJSON();
}
