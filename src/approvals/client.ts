/**
 * Answering and reading approval requests from outside the agent: the `hookbus approvals` CLI,
 * a Slack bot, a ticketing system (docs/approvals.md). The approver's name is the subject token
 * its NATS user may publish under; the coordinator records it as who answered.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { Header } from "../bus/headers.js";
import { Subjects } from "../bus/subjects.js";
import { ErrorCodes, HookbusError, type ErrorCode } from "../foundation/errors.js";
import type { ApprovalEntry } from "./entry.js";
import { NO_GROUP } from "./settle.js";
import { ApprovalStore } from "./store.js";
import { ApprovalReply, type AnswerRequest } from "./wire.js";

export interface AnswerOptions {
  namespace?: string;
  /** The approver's name (its `hookbus auth` user). */
  approver: string;
  /** The group answered for; default: none (`-`). A request naming groups needs one of them. */
  group?: string;
  /** How long to wait for a coordinator (ms). Default 10 s. */
  timeoutMs?: number;
}

/** Send one answer; resolves with the request as it stands after it (settled or not). */
export async function answerApproval(
  nc: NatsConnection,
  answer: AnswerRequest,
  options: AnswerOptions,
): Promise<ApprovalReply> {
  const subjects = new Subjects(options.namespace);
  const subject = subjects.approvalAnswer(options.approver, options.group ?? NO_GROUP);
  let msg;
  try {
    msg = await nc.request(subject, new TextEncoder().encode(JSON.stringify(answer)), {
      timeout: options.timeoutMs ?? 10_000,
    });
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_COORDINATOR_UNAVAILABLE",
      `no coordinator took the answer on ${subject}: ${(error as Error).message}`,
      { subject },
      error,
    );
  }
  const body = JSON.parse(new TextDecoder().decode(msg.data)) as unknown;
  const code = msg.headers?.get(Header.ErrorCode);
  if (code !== undefined && code !== "") {
    const known = Object.hasOwn(ErrorCodes, code) ? (code as ErrorCode) : "HOOKBUS_INTERNAL";
    const message = (body as { error?: { message?: string } }).error?.message ?? code;
    throw new HookbusError(known, message, { id: answer.id });
  }
  return ApprovalReply.parse(body);
}

/** Every request in the bucket, pending first. */
export async function listApprovals(
  nc: NatsConnection,
  namespace?: string,
): Promise<ApprovalEntry[]> {
  const store = await ApprovalStore.open(nc, new Subjects(namespace));
  return (await store.list()).map((s) => s.entry);
}

export async function showApproval(
  nc: NatsConnection,
  id: string,
  namespace?: string,
): Promise<ApprovalEntry> {
  const store = await ApprovalStore.open(nc, new Subjects(namespace));
  const found = await store.get(id);
  if (found === undefined)
    throw new HookbusError("HOOKBUS_APPROVAL_NOT_FOUND", `no approval request ${id}`, { id });
  return found.entry;
}
