/**
 * Session facts in replay and `hookbus policy test`, learnt as the live coordinator learns them
 * (src/coordinator/cedar-evaluator.ts): after each call from its merged decision, after each
 * after_tool_call observation, after each approval settlement; each at the time its record
 * carries. The Cedar entries of the candidate set read them (SessionFactReader).
 */
import {
  afterApproval,
  afterDecision,
  afterToolOutput,
  decidedCallOf,
  MemorySessionFactStore,
  type SessionFacts,
} from "../cedar/index.js";
import type { ActionFacts } from "../facts/index.js";
import type { SessionFactReader } from "../policy/cedar-policy.js";
import type { ToolVocabulary } from "../vocabulary/vocabulary.js";

/** Sessions one replay keeps facts for; beyond, the least recently used is forgotten. */
export const MAX_LEDGER_SESSIONS = 100_000;

interface Recorded {
  hook: string;
  context: Readonly<Record<string, unknown>>;
  event: Readonly<Record<string, unknown>>;
}

/** The session a record belongs to, as the coordinator keys it (its context's ids). */
function keyOf(context: Readonly<Record<string, unknown>>): [string, string] {
  return [String(context.agentId), String(context.sessionKey)];
}

export class SessionLedger implements SessionFactReader {
  private store = new MemorySessionFactStore(MAX_LEDGER_SESSIONS);
  private clock = 0;

  /**
   * `active` false: no Cedar entry reads session facts (a registry of code policies only), so
   * nothing is learnt: the ledger would cost every replayed record and tell no one.
   */
  constructor(
    private readonly vocabulary: ToolVocabulary,
    private readonly active = true,
  ) {}

  /** Every session forgotten (a policy test case starts afresh). */
  reset(): void {
    this.store = new MemorySessionFactStore(MAX_LEDGER_SESSIONS);
    this.clock = 0;
  }

  /** The time of the call about to be decided (its record's receivedAt). */
  at(ms: number): void {
    if (Number.isFinite(ms)) this.clock = ms;
  }

  now(): number {
    return this.clock;
  }

  read(agentId: string, sessionKey: string): Promise<SessionFacts> {
    return this.store.read(agentId, sessionKey);
  }

  /** A call and the merged decision made for it. */
  async decided(
    call: Recorded,
    decision: Readonly<Record<string, unknown>>,
    facts?: ActionFacts,
  ): Promise<void> {
    if (!this.active) return;
    const learnt = decidedCallOf({
      hook: call.hook,
      event: call.event,
      decision,
      at: this.clock,
      vocabulary: this.vocabulary,
      ...(facts === undefined ? {} : { facts }),
    });
    if (learnt === undefined) return;
    await this.store.update(...keyOf(call.context), (f) => afterDecision(f, learnt));
  }

  /** An observation: an after_tool_call not marked blocked brought the tool's output. */
  async observed(record: Recorded): Promise<void> {
    const { event } = record;
    if (!this.active || record.hook !== "after_tool_call") return;
    if (event.blocked === true || typeof event.toolName !== "string") return;
    const tool = this.vocabulary.classify(event.toolName);
    await this.store.update(...keyOf(record.context), (f) => afterToolOutput(f, tool));
  }

  /** An approval request settled (its record). */
  async settled(context: Readonly<Record<string, unknown>>, resolution: string): Promise<void> {
    if (!this.active) return;
    await this.store.update(...keyOf(context), (f) => afterApproval(f, resolution));
  }
}
