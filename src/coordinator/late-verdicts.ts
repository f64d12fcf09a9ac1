/**
 * Late verdicts: a policy's reply that came after its call was decided is recorded on its own
 * ("would have blocked: yes/no"), under the call's identity and its revision's redaction rules.
 */
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { buildLateVerdictRecord } from "../log/decision-record.js";
import { scopedMessageId } from "../log/message-id.js";
import { redactRecord } from "../log/redaction.js";
import type { LateContexts } from "./late-contexts.js";
import type { LogWriter } from "./log-writer.js";
import type { LateReply } from "./policy-asker.js";

/** How long a late record's append may take (it is off every agent's path). */
const LATE_APPEND_MS = 10_000;

export interface LateVerdictDeps {
  bus: Bus;
  writer: LogWriter;
  calls: LateContexts;
  coordinatorId: string;
  redactionKey: string | undefined;
  logger: Logger;
  /** Counted per policy (coordinator metrics). */
  counted: (policy: string) => void;
}

export async function recordLateVerdict(
  deps: LateVerdictDeps,
  { request, outcome }: LateReply,
): Promise<void> {
  deps.counted(outcome.policy);
  const call = deps.calls.get(request.callKey);
  if (call === undefined) {
    deps.logger.warn(
      { callId: request.callId, policy: outcome.policy },
      "late verdict after its call was forgotten; not recorded",
    );
    return;
  }
  const agentId = String(call.context.agentId);
  const sessionKey = String(call.context.sessionKey);
  const record = buildLateVerdictRecord({
    callId: request.callId,
    hook: request.hook,
    context: call.context,
    outcome,
    timeoutMs: request.timeoutMs,
    receivedAt: new Date(),
    coordinator: deps.coordinatorId,
  });
  const subject = deps.bus.subjects.audit(agentId, sessionKey, request.hook, "late");
  const logged = redactRecord(record, call.snapshot.document.redact, { key: deps.redactionKey });
  // Scoped like the decision's id (agents may share callIds), one per policy.
  const msgID = `${scopedMessageId("late", agentId, sessionKey, request.callId)}.${outcome.policy}`;
  await deps.writer
    .append(subject, logged, msgID, Date.now() + LATE_APPEND_MS)
    .catch((error: unknown) =>
      deps.logger.error({ err: error, callId: request.callId }, "could not record a late verdict"),
    );
}
