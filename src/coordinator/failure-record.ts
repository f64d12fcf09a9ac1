/**
 * A refused call or observation is still an interception the agent attempted: it is recorded as
 * an error record, bounded and filed under the subject's agent (never under the agent a body
 * claims), with a scoped id that carries the input's digest.
 */
import { createHash } from "node:crypto";
import type { Msg } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import type { WireError } from "../bus/envelope.js";
import { Header } from "../bus/headers.js";
import { leadingCallId } from "../bus/body-deadline.js";
import { isHookName } from "../catalog/catalog.js";
import { HookbusError, isHookbusError } from "../foundation/errors.js";
import { checkIdLimit, type Limits } from "../foundation/limits.js";
import type { ErrorRecord } from "../log/record.js";
import { redactRecord } from "../log/redaction.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import { INVALID_AGENT, type AgentAddress } from "./identity.js";
import { errorMessageId } from "../log/message-id.js";
import type { LogWriter } from "./log-writer.js";

export interface FailureRecorderDeps {
  bus: Bus;
  writer: LogWriter;
  coordinatorId: string;
  limits: Limits;
  redactionKey?: string | undefined;
}

export interface Failure {
  msg: Msg;
  address: AgentAddress;
  /** The body, when it could be read (validated or not). */
  body?: { id?: unknown; hook?: unknown; context?: unknown; event?: unknown } | undefined;
  /** The call's digest, when the body was valid; else the raw bytes are digested. */
  digest?: string | undefined;
  error: WireError;
  snapshot: RegistrySnapshot;
  receivedAt: Date;
  deadline: number;
}

/** Errors after which the input is not kept in the record: only its digest and size. */
const WITHOUT_INPUT = new Set(["HOOKBUS_LIMIT_EXCEEDED", "HOOKBUS_BAD_MESSAGE"]);

export async function recordFailure(deps: FailureRecorderDeps, failure: Failure): Promise<void> {
  const { bus, limits } = deps;
  const { msg, address, body, error } = failure;
  const context = isRecord(body?.context) ? body.context : {};
  const keepInput = !WITHOUT_INPUT.has(error.code);
  const agentId = address.agentId ?? INVALID_AGENT;
  const sessionKey = validId(context.sessionKey, limits.maxTokenIdBytes) ?? "(unknown)";
  const id =
    validId(body?.id, limits.maxIdBytes) ??
    validId(msg.headers?.get(Header.CallId), limits.maxIdBytes) ??
    // A body that could not be read, sent without headers (protocol 2): its first bytes.
    validId(leadingCallId(msg.data), limits.maxIdBytes) ??
    `unidentified.${failure.receivedAt.getTime()}`;
  const digest = failure.digest ?? createHash("sha256").update(msg.data).digest("hex").slice(0, 64);
  const hook = isHookName(String(body?.hook)) ? String(body?.hook) : address.hookToken;
  const record: ErrorRecord = {
    v: 1,
    kind: "error",
    callId: id,
    hook: isHookName(hook) ? hook : "unknown",
    // Filed under the subject's agent and session, so it says those: a body that claims another
    // agent must not leave a record `audit verify` reads as moved (the claim is in the error).
    context: keepInput ? { ...context, ...asFiled(context, agentId, sessionKey) } : {},
    ...(keepInput && body?.event !== undefined ? { event: body.event } : {}),
    error: keepInput
      ? error
      : {
          ...error,
          details: { ...error.details, inputSha256: digest, inputBytes: msg.data.length },
        },
    ...(failure.digest === undefined ? {} : { callDigest: failure.digest }),
    registryRevision: failure.snapshot.revision,
    receivedAt: failure.receivedAt.toISOString(),
    coordinator: deps.coordinatorId,
  };
  const subject = bus.subjects.audit(
    agentId,
    sessionKey,
    isHookName(record.hook) ? record.hook : "unknown",
    "error",
  );
  const logged = redactRecord(record, failure.snapshot.document.redact, { key: deps.redactionKey });
  await deps.writer
    .append(
      subject,
      logged,
      errorMessageId(agentId, sessionKey, id, digest),
      Math.max(failure.deadline, Date.now() + 1000),
    )
    .catch((e: unknown) => {
      bus.logger.error({ err: e, callId: id }, "could not record a failed call");
    });
}

/** The context's agent and session as the record's subject names them (only those it carried). */
function asFiled(
  context: Record<string, unknown>,
  agentId: string,
  sessionKey: string,
): Record<string, string> {
  return {
    ...("agentId" in context ? { agentId } : {}),
    ...("sessionKey" in context ? { sessionKey } : {}),
  };
}

function validId(value: unknown, maxBytes: number): string | undefined {
  try {
    checkIdLimit("id", value, maxBytes);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
