/**
 * Session facts: what the coordinator has learnt about a session from the calls it decided and
 * the observations it recorded, handed to Cedar as `context.session` so a rule such as "no send
 * after a web fetch in this session" is one policy. Pure: the rules below say how a fact changes;
 * a `SessionFactStore` keeps the facts between calls. docs/cedar.md lists each fact and its source.
 */
import { TOOL_CLASSES, type ToolClass } from "../vocabulary/classes.js";
import type { ToolIdentity } from "../vocabulary/vocabulary.js";

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
}

/** A session that names more tools than this keeps counting them but lists no more names. */
export const MAX_FACT_NAMES = 256;

/** Classes whose results are content from outside (the web, a browser page): they taint. */
const TAINTING_CLASSES: ReadonlySet<ToolClass> = new Set(["web-fetch", "web-search", "browser"]);

/** Every taint label: a tainting class, or `mcp` for any MCP tool's output. */
export const TAINT_LABELS = [...TAINTING_CLASSES, "mcp"] as const;

export function emptySessionFacts(): SessionFacts {
  const classCounts = Object.fromEntries(TOOL_CLASSES.map((c) => [c, 0])) as Record<
    ToolClass,
    number
  >;
  return { toolCalls: 0, toolsCalled: [], classesCalled: [], classCounts, taint: [] };
}

/**
 * After a before_tool_call that was not blocked (allowed, or approved later). Runs per allowed
 * call: every field listed in emptySessionFacts' order, no `{ ...facts, … }` (on the V8 of Node 20
 * a spread followed by more properties costs microseconds: docs/performance.md), and the counts
 * copied with Object.assign then stored (a computed key after a spread costs as much).
 */
export function afterToolCall(facts: SessionFacts, tool: ToolIdentity): SessionFacts {
  const classCounts = Object.assign({}, facts.classCounts);
  // `?? 0`: a store written before a class existed (`unknown`) has no count for it.
  classCounts[tool.class] = (facts.classCounts[tool.class] ?? 0) + 1;
  return {
    toolCalls: facts.toolCalls + 1,
    toolsCalled: withName(facts.toolsCalled, tool.name),
    classesCalled: withName(facts.classesCalled, tool.class),
    classCounts,
    taint: facts.taint,
  };
}

/** After a tool's output reached the session (a before_tool_result not blocked, an after_tool_call). */
export function afterToolOutput(facts: SessionFacts, tool: ToolIdentity): SessionFacts {
  let taint = facts.taint;
  if (TAINTING_CLASSES.has(tool.class)) taint = withName(taint, tool.class);
  if (tool.mcp !== undefined) taint = withName(taint, "mcp");
  if (taint === facts.taint) return facts;
  const { toolCalls, toolsCalled, classesCalled, classCounts } = facts;
  return { toolCalls, toolsCalled, classesCalled, classCounts, taint };
}

function withName<T extends string>(list: T[], name: T): T[] {
  if (list.includes(name) || list.length >= MAX_FACT_NAMES) return list;
  return [...list, name];
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
