/**
 * Observations go through coordinators, so agents never write the log: on
 * `<ns>.observe.<agent>.<hook>` a coordinator validates the event, checks that the context is the
 * subject's agent and within the limits, redacts it, stores ONE record (scoped id
 * `observe.<agentToken>.<sessionToken>.<eventId>`, checked by digest like a call) and only then
 * answers `{ eventId, recordSeq, duplicate }`. A refused observation is recorded as an error.
 */
import type { Msg } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import { ObserveRequest, type ObserveReply } from "../bus/envelope.js";
import { Header } from "../bus/headers.js";
import { headerTimeoutMs } from "../bus/body-deadline.js";
import { isModifyingHook, type HookName } from "../catalog/catalog.js";
import { parseContext, parseEvent } from "../catalog/validate.js";
import { HookbusError } from "../foundation/errors.js";
import {
  callTimeoutMs,
  checkCallIds,
  type AgentRateLimiter,
  type Limits,
} from "../foundation/limits.js";
import { RECORD_VERSION, type ObservationRecord } from "../log/record.js";
import { observationOutcome } from "../log/observation-outcome.js";
import { redactRecord } from "../log/redaction.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import { assertWithinRate, DEFAULT_CALL_TIMEOUT_MS } from "./call-handler.js";
import { recordFailure, toWireError } from "./failure-record.js";
import { replyToAgent } from "./reply.js";
import { addressOf, assertIdentity } from "./identity.js";
import { callDigest, callIdConflict, isSameCall, scopedMessageId } from "../log/message-id.js";
import type { LogWriter } from "./log-writer.js";
import type { CedarEvaluator } from "./cedar-evaluator.js";

export interface ObservationHandlerDeps {
  bus: Bus;
  writer: LogWriter;
  registry: () => RegistrySnapshot;
  coordinatorId: string;
  limits: Limits;
  rateLimiter?: AgentRateLimiter;
  redactionKey?: string | undefined;
  /** Told of each stored after_tool_call, for the session facts of Cedar policies. */
  cedar?: CedarEvaluator;
  /** The namespace encrypts: refuse blob references without a key (HOOKBUS_BLOB_UNSEALED). */
  sealedBlobsOnly?: boolean;
}

export class ObservationHandler {
  constructor(private readonly deps: ObservationHandlerDeps) {}

  async handle(msg: Msg): Promise<void> {
    const receivedAt = new Date();
    const { bus, limits } = this.deps;
    const deadline =
      receivedAt.getTime() +
      callTimeoutMs(headerTimeoutMs(msg.headers), DEFAULT_CALL_TIMEOUT_MS, limits.maxCallTimeoutMs);
    const snapshot = this.deps.registry();
    const address = addressOf(msg.subject, limits);
    let raw: Record<string, unknown> | undefined;
    let digest: string | undefined;
    try {
      assertWithinRate(this.deps.rateLimiter, address);
      const decoded = await bus.codec.decodeMessage(msg, {
        owner: address.agentToken,
        deadline,
        sealedBlobsOnly: this.deps.sealedBlobsOnly === true,
      });
      raw = typeof decoded === "object" && decoded !== null ? (decoded as typeof raw) : undefined;
      const request = ObserveRequest.parse(decoded);
      checkCallIds(limits, { eventId: request.eventId, context: request.context });
      assertIdentity(address, request);
      const hook = request.hook as HookName;
      if (isModifyingHook(hook)) {
        throw new HookbusError(
          "HOOKBUS_BAD_MESSAGE",
          `${hook} is a modifying hook: send it as a call, not an observation`,
          { hook },
        );
      }
      const context = parseContext(hook, request.context);
      const event = parseEvent(hook, request.event);
      digest = callDigest(hook, context, event);
      const reply = await this.store(
        request.eventId,
        hook,
        context,
        event,
        digest,
        snapshot,
        receivedAt,
        deadline,
      );
      if (hook === "after_tool_call" && !reply.duplicate) {
        await this.deps.cedar?.observed(
          String(context.agentId),
          String(context.sessionKey),
          event,
          snapshot.vocabulary,
        );
      }
      await replyToAgent(this.deps.bus, msg, reply, {}, address.agentId);
    } catch (error) {
      const wire = toWireError(error);
      if (wire.code === "HOOKBUS_INTERNAL") bus.logger.error({ err: error }, "observation failed");
      if (wire.code !== "HOOKBUS_LOG_UNAVAILABLE") {
        await recordFailure(this.deps, {
          msg,
          address,
          body: raw === undefined ? undefined : { ...raw, id: raw.eventId },
          digest,
          error: wire,
          snapshot,
          receivedAt,
          deadline,
        });
      }
      await replyToAgent(
        this.deps.bus,
        msg,
        wire,
        { [Header.ErrorCode]: wire.code },
        address.agentId,
      );
    }
  }

  private async store(
    eventId: string,
    hook: HookName,
    context: Record<string, unknown>,
    event: Record<string, unknown>,
    digest: string,
    snapshot: RegistrySnapshot,
    receivedAt: Date,
    deadline: number,
  ): Promise<ObserveReply> {
    const { bus, writer } = this.deps;
    const agentId = String(context.agentId);
    const sessionKey = String(context.sessionKey);
    const record: ObservationRecord = {
      v: RECORD_VERSION,
      kind: "observation",
      eventId,
      hook,
      context,
      event,
      callDigest: digest,
      publishedAt: receivedAt.toISOString(),
      coordinator: this.deps.coordinatorId,
    };
    const logged = redactRecord(record, snapshot.document.redact, { key: this.deps.redactionKey });
    const appended = await writer.append(
      bus.subjects.audit(agentId, sessionKey, hook, observationOutcome(hook, event)),
      logged,
      scopedMessageId("observe", agentId, sessionKey, eventId),
      deadline,
    );
    if (appended.duplicate && appended.stored !== undefined) {
      const stored = appended.stored;
      if (stored.kind !== "observation" || !isSameCall(stored, digest)) {
        throw callIdConflict("eventId", eventId, appended.seq);
      }
    }
    return { eventId, recordSeq: appended.seq, duplicate: appended.duplicate };
  }
}
