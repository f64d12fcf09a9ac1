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
  return askCoordinator(nc, subject, answer, options.timeoutMs);
}

/** One request to the coordinators' approval service, its coded error thrown as such. */
async function askCoordinator(
  nc: NatsConnection,
  subject: string,
  body: { id: string },
  timeoutMs = 10_000,
): Promise<ApprovalReply> {
  let msg;
  try {
    msg = await nc.request(subject, new TextEncoder().encode(JSON.stringify(body)), {
      timeout: timeoutMs,
    });
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_COORDINATOR_UNAVAILABLE",
      `no coordinator answered on ${subject}: ${(error as Error).message}`,
      { subject },
      error,
    );
  }
  const reply = JSON.parse(new TextDecoder().decode(msg.data)) as unknown;
  const code = msg.headers?.get(Header.ErrorCode);
  if (code !== undefined && code !== "") {
    const known = Object.hasOwn(ErrorCodes, code) ? (code as ErrorCode) : "HOOKBUS_INTERNAL";
    const message = (reply as { error?: { message?: string } }).error?.message ?? code;
    throw new HookbusError(known, message, { id: body.id });
  }
  return ApprovalReply.parse(reply);
}

/**
 * The entry as an approver reads it: as stored, or, when its texts are sealed (the namespace
 * encrypts), opened by a coordinator, the only holder of the key (docs/privacy.md, "Approvals").
 */
async function readable(
  nc: NatsConnection,
  subjects: Subjects,
  entry: ApprovalEntry,
): Promise<ApprovalEntry> {
  if (entry.encrypted === undefined) return entry;
  return (await askCoordinator(nc, subjects.approvalShow, { id: entry.id })).entry;
}

/** Every request in the bucket, pending first. */
export async function listApprovals(
  nc: NatsConnection,
  namespace?: string,
): Promise<ApprovalEntry[]> {
  const subjects = new Subjects(namespace);
  const store = await ApprovalStore.open(nc, subjects);
  const entries: ApprovalEntry[] = [];
  for (const { entry } of await store.list()) entries.push(await readable(nc, subjects, entry));
  return entries;
}

export async function showApproval(
  nc: NatsConnection,
  id: string,
  namespace?: string,
): Promise<ApprovalEntry> {
  const subjects = new Subjects(namespace);
  const store = await ApprovalStore.open(nc, subjects);
  const found = await store.get(id);
  if (found === undefined)
    throw new HookbusError("HOOKBUS_APPROVAL_NOT_FOUND", `no approval request ${id}`, { id });
  return readable(nc, subjects, found.entry);
}
