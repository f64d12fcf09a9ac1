/**
 * Session facts: what the coordinator has learnt about a session from the calls it decided and
 * the observations it recorded, handed to Cedar as `context.session` so a rule such as "no send
 * after a web fetch in this session" is one policy. Pure: the rules below say how a fact changes;
 * a `SessionFactStore` keeps the facts between calls. docs/cedar.md lists each fact and its source.
 */
import type { ToolClass } from "../vocabulary/classes.js";
import type { ToolIdentity } from "../vocabulary/vocabulary.js";
import { countIn, zeroCounts, type WindowBucket } from "./session-windows.js";

export interface SessionFacts {
  /** Tool calls allowed at before_tool_call in this session. */
  toolCalls: number;
  /** Names of the tools allowed so far (at most MAX_FACT_NAMES distinct). */
  toolsCalled: string[];
  /** Classes of the tools allowed so far. */
  classesCalled: ToolClass[];
  /** Allowed tool calls per class (every class present, 0 when none). */
  classCounts: Record<ToolClass, number>;
  /** Untrusted sources whose output reached the session: TAINT_LABELS. */
  taint: string[];
  /** Calls whose merged decision was a block, on any modifying hook. */
  refusals: number;
  /** Refused calls per class of their tool (calls about no tool count only in `refusals`). */
  refusalsByClass: Record<ToolClass, number>;
  /** Refusals per blocking policy (the decision's `blockedBy`), at most MAX_FACT_NAMES policies. */
  refusalsByPolicy: Record<string, number>;
  /** Tool calls held for a person, not settled yet. */
  approvalsPending: number;
  /** Approval requests a person denied. */
  approvalsDenied: number;
  /** Hosts of the URLs of the tool calls allowed so far (at most MAX_FACT_NAMES). */
  hosts: string[];
  /** Recipient domains of the tool calls allowed so far (at most MAX_FACT_NAMES). */
  recipientDomains: string[];
  /** Tool calls and refusals by time, for `recent` (session-windows.ts). */
  buckets: WindowBucket[];
}

/** What a decided call teaches: its merged decision, its tool, and what it would contact. */
export interface DecidedCall {
  hook: string;
  /** The merged decision's outcome (allow, modify, block, pending_approval, …). */
  outcome: string;
  /** The merged decision's `blockedBy`: the policy whose block decided it. */
  blockedBy?: string | undefined;
  /** The tool the call is about (before_tool_call, before_tool_result); absent otherwise. */
  tool?: ToolIdentity | undefined;
  /** When the call arrived, ms since the epoch (the record's `receivedAt` in replay). */
  at: number;
  /** Hosts and recipient domains of the call (src/facts summary), for an allowed tool call. */
  contacted?: Contacted | undefined;
}

export interface Contacted {
  hosts: readonly string[];
  recipientDomains: readonly string[];
}

/** A session that names more tools than this keeps counting them but lists no more names. */
export const MAX_FACT_NAMES = 256;

/** Classes whose results are content from outside (the web, a browser page): they taint. */
const TAINTING_CLASSES: ReadonlySet<ToolClass> = new Set(["web-fetch", "web-search", "browser"]);

/** Every taint label: a tainting class, or `mcp` for any MCP tool's output. */
export const TAINT_LABELS = [...TAINTING_CLASSES, "mcp"] as const;

export function emptySessionFacts(): SessionFacts {
  return {
    toolCalls: 0,
    toolsCalled: [],
    classesCalled: [],
    classCounts: zeroCounts(),
    taint: [],
    refusals: 0,
    refusalsByClass: zeroCounts(),
    refusalsByPolicy: {},
    approvalsPending: 0,
    approvalsDenied: 0,
    hosts: [],
    recipientDomains: [],
    buckets: [],
  };
}

/**
 * A copy whose every field is there, in emptySessionFacts' order: facts stored before a field
 * existed read as its empty value. Field by field, no spread (hot path: foundation/hot-path.ts).
 */
function copyOf(facts: SessionFacts): SessionFacts {
  return {
    toolCalls: facts.toolCalls,
    toolsCalled: facts.toolsCalled,
    classesCalled: facts.classesCalled,
    classCounts: facts.classCounts,
    taint: facts.taint,
    refusals: facts.refusals ?? 0,
    refusalsByClass: facts.refusalsByClass ?? zeroCounts(),
    refusalsByPolicy: facts.refusalsByPolicy ?? {},
    approvalsPending: facts.approvalsPending ?? 0,
    approvalsDenied: facts.approvalsDenied ?? 0,
    hosts: facts.hosts ?? [],
    recipientDomains: facts.recipientDomains ?? [],
    buckets: facts.buckets ?? [],
  };
}

/**
 * What a decided call taught, from the MERGED decision (every policy's, Cedar or code): a block
 * is a refusal whoever blocked; anything else on before_tool_call is a call (held for approval
 * too: pending until settled), and on before_tool_result the output reached the session.
 */
export function afterDecision(facts: SessionFacts, call: DecidedCall): SessionFacts {
  const { tool } = call;
  if (call.outcome === "block") return afterRefusal(facts, call);
  if (tool === undefined) return facts;
  if (call.hook === "before_tool_result") return afterToolOutput(facts, tool);
  if (call.hook !== "before_tool_call") return facts;
  const next = copyOf(afterToolCall(facts, tool));
  if (call.outcome === "pending_approval") next.approvalsPending++;
  if (call.contacted !== undefined) {
    next.hosts = withNames(next.hosts, call.contacted.hosts);
    next.recipientDomains = withNames(next.recipientDomains, call.contacted.recipientDomains);
  }
  next.buckets = countIn(next.buckets, { at: call.at, toolCall: tool.class });
  return next;
}

function afterRefusal(facts: SessionFacts, call: DecidedCall): SessionFacts {
  const next = copyOf(facts);
  next.refusals++;
  if (call.tool !== undefined) {
    next.refusalsByClass = Object.assign({}, next.refusalsByClass);
    next.refusalsByClass[call.tool.class] = (next.refusalsByClass[call.tool.class] ?? 0) + 1;
  }
  const by = call.blockedBy;
  const byPolicy = next.refusalsByPolicy;
  if (by !== undefined && (Object.hasOwn(byPolicy, by) || keys(byPolicy) < MAX_FACT_NAMES)) {
    // A null-prototype copy: a policy named `__proto__` is a count like any other.
    const counts = Object.assign(Object.create(null) as Record<string, number>, byPolicy);
    counts[by] = (Object.hasOwn(byPolicy, by) ? byPolicy[by]! : 0) + 1;
    next.refusalsByPolicy = counts;
  }
  next.buckets = countIn(next.buckets, { at: call.at, refusal: true });
  return next;
}

function keys(record: Record<string, number>): number {
  return Object.keys(record).length;
}

/** A settled approval request: no longer pending; a person's denial counted. */
export function afterApproval(facts: SessionFacts, resolution: string): SessionFacts {
  const next = copyOf(facts);
  next.approvalsPending = Math.max(0, next.approvalsPending - 1);
  if (resolution === "denied") next.approvalsDenied++;
  return next;
}

/**
 * After a before_tool_call that was not blocked (allowed, or approved later). Runs per allowed
 * call: a copy field by field (copyOf), no `{ ...facts, … }`, and the counts copied with
 * Object.assign then stored, as a computed key after a spread costs as much as a property after
 * one (hot path: foundation/hot-path.ts).
 */
export function afterToolCall(facts: SessionFacts, tool: ToolIdentity): SessionFacts {
  const classCounts = Object.assign({}, facts.classCounts);
  // `?? 0`: a store written before a class existed (`unknown`) has no count for it.
  classCounts[tool.class] = (facts.classCounts[tool.class] ?? 0) + 1;
  const next = copyOf(facts);
  next.toolCalls = facts.toolCalls + 1;
  next.toolsCalled = withName(facts.toolsCalled, tool.name);
  next.classesCalled = withName(facts.classesCalled, tool.class);
  next.classCounts = classCounts;
  return next;
}

/** After a tool's output reached the session (a before_tool_result not blocked, an after_tool_call). */
export function afterToolOutput(facts: SessionFacts, tool: ToolIdentity): SessionFacts {
  let taint = facts.taint;
  if (TAINTING_CLASSES.has(tool.class)) taint = withName(taint, tool.class);
  if (tool.mcp !== undefined) taint = withName(taint, "mcp");
  if (taint === facts.taint) return facts;
  const next = copyOf(facts);
  next.taint = taint;
  return next;
}

function withName<T extends string>(list: T[], name: T): T[] {
  if (list.includes(name) || list.length >= MAX_FACT_NAMES) return list;
  return [...list, name];
}

function withNames(list: string[], names: readonly string[]): string[] {
  let out = list;
  for (const name of names) if (name !== "") out = withName(out, name);
  return out;
}

/**
 * Where facts live between calls. `update` must not lose a concurrent update of the same session
 * (taint is a security fact: a lost write would re-open what it closed).
 */
export interface SessionFactStore {
  read(agentId: string, sessionKey: string): Promise<SessionFacts>;
  update(
    agentId: string,
    sessionKey: string,
    change: (facts: SessionFacts) => SessionFacts,
  ): Promise<void>;
}

/** One map key per session: the agent id's length first, so no two pairs share a key. */
function sessionKeyOf(agentId: string, sessionKey: string): string {
  return `${agentId.length}:${agentId}${sessionKey}`;
}

/**
 * Facts in this process, least recently used session forgotten beyond `maxSessions`. Right for
 * one coordinator, replay and tests; several coordinators share a session's facts only through
 * a shared store.
 */
export class MemorySessionFactStore implements SessionFactStore {
  private readonly sessions = new Map<string, SessionFacts>();

  constructor(private readonly maxSessions = 10_000) {}

  read(agentId: string, sessionKey: string): Promise<SessionFacts> {
    const key = sessionKeyOf(agentId, sessionKey);
    const facts = this.sessions.get(key);
    if (facts === undefined) return Promise.resolve(emptySessionFacts());
    this.sessions.delete(key); // re-insert: most recently used last
    this.sessions.set(key, facts);
    return Promise.resolve(facts);
  }

  update(
    agentId: string,
    sessionKey: string,
    change: (facts: SessionFacts) => SessionFacts,
  ): Promise<void> {
    const key = sessionKeyOf(agentId, sessionKey);
    const next = change(this.sessions.get(key) ?? emptySessionFacts());
    this.sessions.delete(key);
    this.sessions.set(key, next);
    for (const oldest of this.sessions.keys()) {
      if (this.sessions.size <= this.maxSessions) break;
      this.sessions.delete(oldest);
    }
    return Promise.resolve();
  }
}
