/**
 * The after_llm_call gate (DESIGN §2): the after_llm_call decision is enforced at
 * before_tool_call, in the agent process.
 *
 * The seeds first tried a mutable flag written when the decision arrived and read by each tool
 * call ("best effort", with sequence counters against slow handlers); a tool that started before
 * the decision landed ran ungated. Here the gate stores the decision's PROMISE, synchronously,
 * when after_llm_call is asked, so every tool call of that turn awaits the same promise: there is
 * no window in which a tool can start before the decision is known.
 *
 * Gates are keyed by agent, session and run: two agents, or two sessions of one agent, may reuse a
 * run id (frameworks number runs per session, and examples hard-code "run-1"). Keyed by agent and
 * run only, one session's block blocked the other's tools and the other's before_llm_call cleared
 * it, so a blocked tool ran (issue 13). A context without a run id (optional in the catalog) has
 * one gate per agent and session.
 *
 * Rules, per run:
 * - no gate (after_llm_call was never asked this turn) → proceed;
 * - the after_llm_call call failed (timeout, no coordinator, invalid event) → block: tool gates
 *   fail closed;
 * - the decision blocked → block every tool call of the turn;
 * - the decision carries `toolCalls` (an allowlist is active) → a call whose id is missing, or not
 *   in the allowlist, is blocked (a call without an id must not slip through: seed 000 review);
 * - otherwise → proceed to before_tool_call.
 * The gate is cleared at the next LLM call of the run and when the run ends. A run that never
 * ends must not hold memory forever: a gate also expires `ttlMs` after it was opened (default one
 * hour, far longer than a turn's tool calls take), and beyond `maxRuns` gates the oldest is
 * forgotten. A forgotten gate lets that turn's later tool calls go on to before_tool_call, which
 * the policies still decide.
 *
 * This class holds no I/O: the decision source is whatever promise the caller stores, so the
 * rules are unit-tested with promises the test controls.
 */
import type { Decision } from "../catalog/catalog.js";
import { toolCallId as idOfToolCall } from "../catalog/common.js";
import { isHookbusError } from "../foundation/errors.js";
import type { MaybePromise } from "../foundation/hot-path.js";

type AfterLlmCallDecision = Decision<"after_llm_call">;

/** What the gate knows once the stored promise settled. */
type GateState =
  { status: "decided"; decision: AfterLlmCallDecision } | { status: "failed"; error: unknown };

export type GateVerdict =
  { proceed: true } | { proceed: false; blockReason: string; blockedBy?: string };

/** Which run a gate belongs to: agent, session and run (see the header). */
export interface RunRef {
  agentId: string;
  sessionKey: string;
  /** Absent: the session's one gate. */
  runId?: string | undefined;
}

/** The run id a gate is filed under; a context without one shares the session's gate. */
const NO_RUN = "";

const PROCEED: GateVerdict = Object.freeze({ proceed: true });

export const DEFAULT_GATE_TTL_MS = 60 * 60 * 1000;
export const DEFAULT_MAX_GATES = 10_000;

export interface GateLimits {
  /** A gate is forgotten this long after it was opened. Default one hour. */
  ttlMs?: number;
  /** Gates held at once; beyond it the oldest is forgotten. Default 10,000. */
  maxRuns?: number;
}

export class AfterLlmCallGate {
  /** runId → [agentId, sessionKey] → the settled-or-pending state. Nested so `endRun(runId)` is cheap. */
  private readonly gates = new Map<string, Map<string, Promise<GateState>>>();
  /** Every gate by opening time, oldest first: `[runId, agentId, sessionKey]` and when it expires. */
  private readonly opened = new Map<string, { run: RunRef; expiresAt: number }>();
  private readonly ttlMs: number;
  private readonly maxRuns: number;

  constructor(limits: GateLimits = {}) {
    this.ttlMs = limits.ttlMs ?? DEFAULT_GATE_TTL_MS;
    this.maxRuns = limits.maxRuns ?? DEFAULT_MAX_GATES;
  }

  /**
   * Store the decision of the after_llm_call just asked. Must be called synchronously, before
   * the caller awaits anything, so a tool call started right after finds it. A rejected promise
   * is a failed call (kept, never an unhandled rejection).
   */
  open(run: RunRef, decision: Promise<AfterLlmCallDecision>): void {
    const state = decision.then(
      (d): GateState => ({ status: "decided", decision: d }),
      (error: unknown): GateState => ({ status: "failed", error }),
    );
    const runId = run.runId ?? NO_RUN;
    let byAgent = this.gates.get(runId);
    if (byAgent === undefined) {
      byAgent = new Map();
      this.gates.set(runId, byAgent);
    }
    // A second after_llm_call in the same turn replaces the first: its decision is the newer one.
    byAgent.set(agentSessionKey(run), state);
    const key = orderKey(run);
    this.opened.delete(key);
    this.opened.set(key, {
      run: { runId, agentId: run.agentId, sessionKey: run.sessionKey },
      expiresAt: Date.now() + this.ttlMs,
    });
    this.expire();
  }

  /** Forget the run's gate (next LLM call of the run). */
  clear(run: RunRef): void {
    this.opened.delete(orderKey(run));
    const runId = run.runId ?? NO_RUN;
    const byAgent = this.gates.get(runId);
    if (byAgent === undefined) return;
    byAgent.delete(agentSessionKey(run));
    if (byAgent.size === 0) this.gates.delete(runId);
  }

  /**
   * Forget a run id's gates: of every agent and session, or of one agent's sessions, or of one
   * agent's one session.
   */
  endRun(runId: string, agentId?: string, sessionKey?: string): void {
    if (agentId !== undefined && sessionKey !== undefined) {
      return this.clear({ agentId, sessionKey, runId });
    }
    for (const key of [...(this.gates.get(runId)?.keys() ?? [])]) {
      const [agent, session] = JSON.parse(key) as [string, string];
      if (agentId === undefined || agent === agentId) {
        this.clear({ runId, agentId: agent, sessionKey: session });
      }
    }
  }

  has(run: RunRef): boolean {
    this.expire();
    return this.gates.get(run.runId ?? NO_RUN)?.has(agentSessionKey(run)) ?? false;
  }

  /** How many runs hold a gate (for leak checks). */
  get size(): number {
    let n = 0;
    for (const byAgent of this.gates.values()) n += byAgent.size;
    return n;
  }

  /**
   * May this tool call run? Synchronous when the run has no gate (the common case: no await,
   * no timer); a promise when it must wait for the after_llm_call decision.
   *
   * `toolCallIds` are the ids the call is known by (the event's and the context's). Empty strings
   * and undefined count as no id; when both are given, each must be allowed.
   */
  check(run: RunRef, ...toolCallIds: (string | undefined)[]): MaybePromise<GateVerdict> {
    this.expire();
    const state = this.gates.get(run.runId ?? NO_RUN)?.get(agentSessionKey(run));
    if (state === undefined) return PROCEED;
    return state.then((s) => verdictFor(s, toolCallIds));
  }

  /** Forget gates past their TTL, and the oldest beyond the bound (oldest first: cheap). */
  private expire(): void {
    const now = Date.now();
    for (const { run, expiresAt } of this.opened.values()) {
      if (this.opened.size <= this.maxRuns && expiresAt > now) return;
      this.clear(run);
    }
  }
}

/** JSON tuples: no run id, agent id or session key can make two different runs collide. */
function orderKey(run: RunRef): string {
  return JSON.stringify([run.runId ?? NO_RUN, run.agentId, run.sessionKey]);
}

function agentSessionKey(run: RunRef): string {
  return JSON.stringify([run.agentId, run.sessionKey]);
}

function verdictFor(state: GateState, rawIds: (string | undefined)[]): GateVerdict {
  if (state.status === "failed") {
    const error = state.error;
    const why = isHookbusError(error)
      ? `${error.code}: ${error.message}`
      : String((error as Error)?.message ?? error);
    return {
      proceed: false,
      blockReason: `after_llm_call did not decide (${why}); tool calls are blocked until the next LLM call (tool gates fail closed)`,
    };
  }
  const decision = state.decision;
  if (decision.outcome === "block") {
    return {
      proceed: false,
      blockReason: `after_llm_call blocked this turn's tool calls: ${decision.blockReason ?? "no reason given"}`,
      ...(decision.blockedBy === undefined ? {} : { blockedBy: decision.blockedBy }),
    };
  }
  if (decision.toolCalls === undefined) return PROCEED;

  // An allowlist is active. The policies that narrowed it: one of them removed this call, and
  // we can name it only when there is exactly one.
  const narrowers = decision.decidedBy.toolCalls;
  const by = narrowers?.length === 1 ? { blockedBy: narrowers[0]! } : {};
  const ids = rawIds.filter((id): id is string => typeof id === "string" && id.length > 0);
  if (ids.length === 0) {
    return {
      proceed: false,
      blockReason:
        "a tool call without an id is blocked while an after_llm_call allowlist is active",
      ...by,
    };
  }
  const allowed = new Set<string>();
  for (const call of decision.toolCalls) {
    const id = idOfToolCall(call);
    if (id !== undefined) allowed.add(id);
  }
  const denied = ids.find((id) => !allowed.has(id));
  if (denied !== undefined) {
    return {
      proceed: false,
      blockReason: `tool call ${JSON.stringify(denied)} is not in the after_llm_call allowlist`,
      ...by,
    };
  }
  return PROCEED;
}
