/**
 * The coordinator's side of approvals (docs/approvals.md): it opens a request when a decision is
 * `pending_approval`, takes approvers' answers and agents' status questions (queue group), and
 * settles each request exactly once. The approvals bucket's compare-and-set decides who settles
 * (an answer, or whoever first notices the timeout: a status question or the sweep); the
 * settlement's log record is written after it, with a message id per request, by whoever finds it
 * missing. A settlement is told to the agent only once its record is stored.
 */
import { createHash } from "node:crypto";
import { headers, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { Header } from "../bus/headers.js";
import { decodeToken, encodeToken } from "../bus/tokens.js";
import { APPROVER_GROUP_PATTERN, type ApprovalRequest } from "../catalog/approval.js";
import { HookbusError } from "../foundation/errors.js";
import { redactRecord, type RedactionRule } from "../log/redaction.js";
import { approvalIdOf, MAX_SHOWN_PARAMS_BYTES, type ApprovalEntry } from "../approvals/entry.js";
import {
  applyAnswer,
  approvalRecord,
  blockedAsErased,
  checkedAgainstStops,
  erasedDecision,
  expire,
  NO_GROUP,
  settledDecision,
  type IncomingAnswer,
} from "../approvals/settle.js";
import type { ApprovalEntries, StoredEntry } from "../approvals/store.js";
import type { LogRecord } from "../log/record.js";
import { subjectDigest, subjectOf } from "../privacy/record-cipher.js";
import { AnswerRequest, StatusRequest, type ApprovalReply } from "../approvals/wire.js";
import { toWireError } from "./failure-record.js";
import type { LogWriter } from "./log-writer.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import { STOPS_STALE_AFTER_MS, type StopListSource } from "../registry/stops.js";
import { stopOfTool, stopStateFor } from "./emergency-stop.js";
import { isPromise } from "../foundation/hot-path.js";

/** Largest answer or status body taken (they are a few hundred bytes). */
const MAX_BODY_BYTES = 16 * 1024;
/** Compare-and-set rounds before giving up (each lost round means another writer progressed). */
const MAX_CAS_ROUNDS = 32;
/** Time a settlement's record write may take. */
const RECORD_DEADLINE_MS = 10_000;
/** How long a settlement to allow waits for a fresh read of a stale emergency stop list. */
const STOP_CHECK_MS = STOPS_STALE_AFTER_MS;

export interface ApprovalServiceOptions {
  nc: NatsConnection;
  bus: Bus;
  /** The bucket; a SealedApprovalStore when the namespace encrypts (docs/privacy.md). */
  store: ApprovalEntries;
  /** The namespace encrypts: each entry names its data subject (by digest) for its key. */
  encrypts?: boolean;
  writer: LogWriter;
  coordinatorId: string;
  logger: Logger;
  /** The redaction rules in force (the settlement record is redacted like every record). */
  redact: () => readonly RedactionRule[];
  redactionKey?: string | undefined;
  /** How often to settle expired requests nobody asked about (ms; 0: never). Default 2000. */
  sweepIntervalMs?: number;
  /**
   * The emergency stop list, checked when a settlement would allow (with the registry revision in
   * force: its vocabulary classes the tool). Absent: no stop list is enforced.
   */
  stops?: { list: StopListSource; registry: () => RegistrySnapshot };
  /** Told once per request, by the coordinator that stored its settlement record (session facts). */
  onSettled?: (entry: ApprovalEntry) => Promise<void>;
}

/** What the call handler knows of a decision that waits for a person. */
export interface PendingCall {
  callKey: string;
  callId: string;
  context: Record<string, unknown>;
  callDigest: string;
  decision: Record<string, unknown>;
  event: Record<string, unknown>;
  decisionSeq: number;
}

function encodeJson(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}

function parseBody(msg: Msg): unknown {
  if (msg.data.length > MAX_BODY_BYTES)
    throw new HookbusError("HOOKBUS_LIMIT_EXCEEDED", `body over ${MAX_BODY_BYTES} bytes`, {
      limit: "bytes",
    });
  try {
    return JSON.parse(new TextDecoder().decode(msg.data));
  } catch {
    throw new HookbusError("HOOKBUS_BAD_MESSAGE", "the body is not JSON");
  }
}

function respond(msg: Msg, body: unknown, code?: string): void {
  if (msg.reply === undefined || msg.reply === "") return;
  const h = headers();
  if (code !== undefined) h.set(Header.ErrorCode, code);
  msg.respond(encodeJson(body), { headers: h });
}

export class ApprovalService {
  private readonly subscriptions: Subscription[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(private readonly options: ApprovalServiceOptions) {}

  start(): void {
    const { nc, bus, logger } = this.options;
    const queue = bus.subjects.coordinatorQueue;
    const serve = (subject: string, handle: (msg: Msg) => Promise<void>) =>
      nc.subscribe(subject, {
        queue,
        callback: (error, msg) => {
          if (error !== null) return void logger.error({ err: error }, "approvals subscription");
          const work = handle(msg).catch((e: unknown) => {
            const wire = toWireError(e);
            if (wire.code === "HOOKBUS_INTERNAL") logger.error({ err: e }, "approvals failure");
            respond(msg, { error: wire }, wire.code);
          });
          this.inFlight.add(work);
          void work.finally(() => this.inFlight.delete(work));
        },
      });
    this.subscriptions.push(
      serve(bus.subjects.approvalAnswerWildcard, (msg) => this.answer(msg)),
      serve(bus.subjects.approvalStatusWildcard, (msg) => this.status(msg)),
      serve(bus.subjects.approvalShow, (msg) => this.show(msg)),
    );
    const every = this.options.sweepIntervalMs ?? 2000;
    if (every > 0) {
      this.sweepTimer = setInterval(() => void this.sweep(), every);
      this.sweepTimer.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    for (const s of this.subscriptions) {
      // Best effort on stop: a closed connection has nothing to drain.
      await s.drain().catch((error: unknown) => {
        this.options.logger.debug({ err: error }, "approvals subscription did not drain");
      });
    }
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Store the request of a pending decision (after its decision record is stored, before the
   * agent is answered). A re-sent call finds the request it opened before, answered or not.
   */
  async open(call: PendingCall): Promise<ApprovalEntry> {
    const request = call.decision.requireApproval as ApprovalRequest;
    const params = (call.decision.params ?? call.event.params ?? {}) as Record<string, unknown>;
    const paramsText = JSON.stringify(params);
    const now = Date.now();
    const entry: ApprovalEntry = {
      v: 1,
      id: approvalIdOf(call.callKey),
      agentId: String(call.context.agentId),
      sessionKey: String(call.context.sessionKey),
      ...(typeof call.context.runId === "string" ? { runId: call.context.runId } : {}),
      callId: call.callId,
      hook: "before_tool_call",
      callDigest: call.callDigest,
      decisionSeq: call.decisionSeq,
      toolName: String(call.event.toolName),
      ...(Buffer.byteLength(paramsText) <= MAX_SHOWN_PARAMS_BYTES ? { params } : {}),
      paramsDigest: createHash("sha256").update(paramsText, "utf8").digest("hex"),
      request,
      decision: call.decision,
      requestedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + request.timeoutMs).toISOString(),
      answers: [],
      ...(this.options.encrypts === true
        ? { subject: subjectDigest(subjectOf({ context: call.context } as LogRecord)) }
        : {}),
    };
    return (await this.options.store.create(entry)).entry;
  }

  private async answer(msg: Msg): Promise<void> {
    const prefix = `${this.options.bus.subjects.namespace}.approvals.answer.`;
    const [approverToken, group] = msg.subject.slice(prefix.length).split(".");
    if (approverToken === undefined || group === undefined)
      throw new HookbusError("HOOKBUS_BAD_MESSAGE", `not an answer subject: ${msg.subject}`);
    if (group !== NO_GROUP && !APPROVER_GROUP_PATTERN.test(group))
      throw new HookbusError("HOOKBUS_INVALID_ARGUMENT", `invalid group token ${group}`);
    const body = AnswerRequest.parse(parseBody(msg));
    const incoming: IncomingAnswer = {
      approver: decodeToken(approverToken),
      group,
      decision: body.decision,
      reason: body.reason,
      from: body.from,
      callDigest: body.callDigest,
    };
    const settled = await this.advance(body.id, (entry, now) => {
      if (entry.settlement === undefined) return applyAnswer(entry, incoming, now);
      // Already settled: say so (after making sure its record exists, below).
      return undefined;
    });
    const counted = settled.entry.answers.some(
      (a) => a.approver === incoming.approver && a.group === group && a.decision === body.decision,
    );
    if (!counted)
      throw new HookbusError(
        "HOOKBUS_APPROVAL_SETTLED",
        `approval ${body.id} was already settled: ${settled.entry.settlement?.resolution ?? "?"}`,
        { id: body.id },
      );
    this.options.logger.info(
      { id: body.id, approver: incoming.approver, decision: body.decision },
      "approval answered",
    );
    respond(msg, this.reply(settled.entry));
  }

  private async status(msg: Msg): Promise<void> {
    const prefix = `${this.options.bus.subjects.namespace}.approvals.status.`;
    const agentToken = msg.subject.slice(prefix.length);
    const body = StatusRequest.parse(parseBody(msg));
    const found = await this.options.store.get(body.id);
    if (found === undefined)
      throw new HookbusError("HOOKBUS_APPROVAL_NOT_FOUND", `no approval request ${body.id}`, {
        id: body.id,
      });
    if (encodeToken(found.entry.agentId) !== agentToken)
      throw new HookbusError(
        "HOOKBUS_APPROVAL_FORBIDDEN",
        `approval ${body.id} belongs to another agent`,
        { id: body.id },
      );
    // Whoever notices the timeout settles it: this status question may be the first to.
    const current = await this.advance(body.id, (entry, now) => expire(entry, now));
    respond(msg, this.reply(current.entry, current.erased));
  }

  /**
   * A request as approvers see it, its sealed texts opened (or "[erased]"): what the CLI and the
   * agent adapters read when the bucket holds ciphertext. Approvers may read every request, as
   * they may list the bucket.
   */
  private async show(msg: Msg): Promise<void> {
    const body = StatusRequest.parse(parseBody(msg));
    const found = await this.options.store.get(body.id);
    if (found === undefined)
      throw new HookbusError("HOOKBUS_APPROVAL_NOT_FOUND", `no approval request ${body.id}`, {
        id: body.id,
      });
    respond(msg, this.reply(found.entry, found.erased));
  }

  /** Settle every expired request (and record any settlement whose record is missing). */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let settled = 0;
    try {
      const now = new Date();
      for (const { entry } of await this.options.store.list()) {
        const due =
          (entry.settlement === undefined && Date.parse(entry.expiresAt) <= now.getTime()) ||
          (entry.settlement !== undefined && entry.recordSeq === undefined);
        if (!due) continue;
        // One request that cannot settle now (an unreadable stop list holds a timeout that would
        // allow) must not hold up the others behind it.
        const done = await this.advance(entry.id, (e, at) => expire(e, at)).then(
          () => true,
          (error: unknown) => {
            this.options.logger.warn({ err: error, id: entry.id }, "approval not settled yet");
            return false;
          },
        );
        if (done) settled++;
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, "approvals sweep failed; retried next round");
    } finally {
      this.sweeping = false;
    }
    return settled;
  }

  private reply(entry: ApprovalEntry, erased = false): ApprovalReply {
    const recorded = entry.settlement !== undefined && entry.recordSeq !== undefined;
    const decide = erased ? erasedDecision : settledDecision;
    return {
      id: entry.id,
      state: recorded ? "settled" : "pending",
      entry,
      ...(recorded ? { decision: decide(entry) } : {}),
    };
  }

  /**
   * One step of the request, exactly once: apply `change` with compare-and-set (a lost race
   * re-reads and tries again), then make sure a settlement has its log record.
   */
  private async advance(
    id: string,
    change: (entry: ApprovalEntry, now: Date) => ApprovalEntry | undefined,
  ): Promise<StoredEntry> {
    const { store } = this.options;
    for (let round = 0; round < MAX_CAS_ROUNDS; round++) {
      const found = await store.get(id);
      if (found === undefined)
        throw new HookbusError("HOOKBUS_APPROVAL_NOT_FOUND", `no approval request ${id}`, { id });
      let { entry, revision } = found;
      const now = new Date();
      // Erased texts settle to a block before anything else can happen to the request.
      const changed = found.erased === true ? erasedStep(entry, now) : change(entry, now);
      const next =
        changed === undefined || entry.settlement !== undefined
          ? changed
          : await this.unlessStopped(changed);
      if (next !== undefined) {
        const written = await store.update(next, revision);
        if (written === undefined) continue;
        entry = next;
        revision = written;
      }
      const erased = found.erased === true ? { erased: true } : {};
      if (entry.settlement === undefined || entry.recordSeq !== undefined)
        return { entry, revision, ...erased };
      const recordSeq = await this.record(entry);
      const withSeq = { ...entry, recordSeq };
      const stored = await store.update(withSeq, revision);
      if (stored === undefined) continue;
      return { entry: withSeq, revision: stored, ...erased };
    }
    throw new HookbusError(
      "HOOKBUS_STATE_CONFLICT",
      `approval ${id}: too many concurrent writers; try again`,
      { id },
    );
  }

  /**
   * A step that settles to allow, checked against the emergency stop list first: a stop of the
   * call's agent or tool in force by now blocks it (and the entry, so its record, names the stop).
   * A list that stays unreadable refuses the step with HOOKBUS_STOP_LIST_UNREADABLE: the request
   * stays pending (the answer may be sent again; a timeout is settled by a later status question
   * or sweep), and an agent that waits past its grace fails closed.
   */
  private async unlessStopped(next: ApprovalEntry): Promise<ApprovalEntry> {
    const stops = this.options.stops;
    if (stops === undefined || next.settlement?.effect !== "allow") return next;
    const checked = stopStateFor(stops.list, Date.now() + STOP_CHECK_MS);
    const state = isPromise(checked) ? await checked : checked;
    if (state === undefined) return next;
    if (!state.readable)
      throw new HookbusError(
        "HOOKBUS_STOP_LIST_UNREADABLE",
        `approval ${next.id} cannot settle to allow while the emergency stop list cannot be read (${state.why}); it stays pending`,
        { id: next.id },
      );
    const call = { agentId: next.agentId, toolName: next.toolName, snapshot: stops.registry() };
    return checkedAgainstStops(next, state.list.revision, stopOfTool(state, call));
  }

  /** The settlement's record; the same message id for every writer, so the log keeps one. */
  private async record(entry: ApprovalEntry): Promise<number> {
    const { bus, writer, coordinatorId } = this.options;
    const record = approvalRecord(entry, coordinatorId);
    const logged = redactRecord(record, this.options.redact(), {
      key: this.options.redactionKey,
    });
    const subject = bus.subjects.audit(entry.agentId, entry.sessionKey, entry.hook, "approval");
    const appended = await writer.append(
      subject,
      logged,
      `approval.${entry.id}`,
      Date.now() + RECORD_DEADLINE_MS,
    );
    // Only the writer whose record was new: the log's message id makes it one per request.
    if (!appended.duplicate)
      await this.options.onSettled?.(entry).catch((err: unknown) => {
        this.options.logger.warn({ err, id: entry.id }, "session facts not told of a settlement");
      });
    return appended.seq;
  }
}

/** The step an erased request takes: its block (see blockedAsErased), or none when it has one. */
function erasedStep(entry: ApprovalEntry, now: Date): ApprovalEntry | undefined {
  const blocked = blockedAsErased(entry, now);
  return blocked === entry ? undefined : blocked;
}

/** The decision of a pending call, with the id of its request. */
export function withApprovalId<D extends { outcome: string }>(decision: D, callKey: string): D {
  if (decision.outcome !== "pending_approval") return decision;
  return { ...decision, approval: { id: approvalIdOf(callKey) } };
}
