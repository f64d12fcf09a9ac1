/**
 * The run core every framework adapter shares: who is calling (agent, session, run) and what the
 * run has seen, found through the run rather than a module variable.
 *
 * Frameworks create models, tools and agents once and reuse them across runs and sessions, so an
 * adapter cannot hold "the current run" itself: two sessions would share it. The run lives in an
 * AsyncLocalStorage entered by `withHookbusRun`; every model call and tool execution the
 * framework starts inside the callback finds it (promises keep their async context). The
 * after_llm_call gate is the client's, keyed by agent, session and run (src/agent/gate.ts), so
 * two runs never share a gate even on one client.
 *
 * Outside a run an adapter refuses (HOOKBUS_NO_RUN) instead of guessing: a tool call that cannot
 * say which run it belongs to cannot be checked against that run's gate.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import type { HookbusClient } from "../../agent/client.js";
import type { DecisionSource } from "../../agent/types.js";
import type { Decision, ModifyingHookName } from "../../catalog/catalog.js";
import type { HookContextInput, HookEventInput } from "../../catalog/input.js";
import { HookbusError } from "../../foundation/errors.js";
import { checkIdLimit, DEFAULT_LIMITS, limitExceeded } from "../../foundation/limits.js";
import { isPromise } from "../../foundation/hot-path.js";

/** The most assistant texts one run collects for before_response_emit's `allContent`. */
export const MAX_RUN_TEXTS = 10_000;

/** The most tool calls a run keeps decided by a framework's approval step and not yet executed. */
const MAX_DECIDED_TOOL_CALLS = 1024;

export interface HookbusRunOptions {
  client: HookbusClient;
  agentId: string;
  sessionKey: string;
  /** Default: a new UUID per run (frameworks rarely have a run id of their own). */
  runId?: string;
  /** Where the conversation happens (slack, web, cli, ...): sent in every context. */
  channel?: string;
  /**
   * Answer hookbus approvals through the framework's own human-in-the-loop (docs/approvals.md):
   * a held tool call surfaces as the framework's approval request, and the app's answer is sent
   * to the coordinators as this approver. Without it a held call waits inside the tool.
   */
  approvals?: FrameworkApprovals;
  /**
   * Called once per hookbus decision the adapter obtains in this run (every modifying hook it
   * asks, the adapter's own refusals, an approval's settlement), to show "redacted by X" or
   * "blocked by Y". It gets a frozen copy: it cannot change what is enforced. What it throws (or
   * its promise rejects with) is logged on the client's logger and does not affect the run.
   */
  onDecision?: DecisionCallback;
  /**
   * Observe `agent_end` when the run ends (`success`, the error's text, `durationMs`). Default
   * true. Fire and forget: a failed observation is logged on the client's logger, never thrown.
   */
  agentEnd?: boolean;
  /**
   * Ask before_agent_reply before the run's first LLM call, when the run starts with a user's
   * message: a policy's reply ends the run with that reply and the model is never called.
   * Default true; turn it off when the app asks before_agent_reply itself.
   */
  agentReply?: boolean;
  /**
   * Observe `llm_input` as each LLM call is sent and `llm_output` as its answer arrives. Default
   * true. Fire and forget, like `agent_end`: a failed observation is logged, never thrown.
   */
  llmObservations?: boolean;
}

/** Where a decision an adapter reports came from: the client's sources, or the adapter itself. */
export type AdapterDecisionSource = DecisionSource | "adapter" | "approval";

/** One decision of a run, as `onDecision` gets it (deeply frozen). */
export interface HookbusDecisionEvent {
  hook: ModifyingHookName;
  decision: Decision<ModifyingHookName>;
  /**
   * `coordinator`, `fast-path` (no policy: allowed locally), `after_llm_call_gate`, `adapter`
   * (refused by the adapter, e.g. a tool not offered this turn) or `approval` (a settlement).
   */
  source: AdapterDecisionSource;
  /** The run's agent, session, run id and channel. */
  context: RunIdentity;
  /** The hookbus call id, when the call was sent (coordinator decisions, approvals). */
  callId?: string;
  /** For the tool hooks: the tool and the framework's id of the call. */
  toolName?: string;
  toolCallId?: string;
}

export type DecisionCallback = (event: HookbusDecisionEvent) => void | Promise<void>;

/** Who answers approvals for the app's people (an approver user of `hookbus auth`). */
export interface FrameworkApprovals {
  /** A connection the approver may answer on (its NATS user); may be the agent's in development. */
  nc: NatsConnection;
  /** The approver's name: the subject token its NATS user may publish answers under. */
  approver: string;
  /** The group answered for, when the requests name one. */
  group?: string;
  /** Where the answer came from, for the record. Default: the framework (`ai-sdk`, `openai-agents`). */
  from?: string;
}

/** The observations of a run as a whole (the tool observations carry a tool's context). */
type RunObservation = "agent_end" | "llm_input" | "llm_output";

/** The context every call of the run carries. */
export interface RunIdentity {
  agentId: string;
  sessionKey: string;
  runId: string;
  channel?: string;
}

export class HookbusRun {
  readonly client: HookbusClient;
  readonly context: Readonly<RunIdentity>;
  /** The assistant texts of the run so far, as the model produced them (for `allContent`). */
  private readonly assistantTexts: string[] = [];
  /**
   * The tool names the last before_llm_call offered the model; undefined before the first LLM
   * call. A call to any other tool is refused when executed: narrowing only changes what the
   * model is offered, and frameworks execute whatever the model calls (issue 13).
   */
  offeredTools: ReadonlySet<string> | undefined;
  /** LLM calls so far in this run (the next before_llm_call's `iteration`). */
  llmCalls = 0;
  /** Who answers hookbus approvals through the framework's own approval flow, if anyone. */
  readonly approvals: FrameworkApprovals | undefined;
  /**
   * Tool calls decided before the framework ran them (its approval step asked hookbus): the
   * input each may run with, or why it may not. Taken once by the tool's execution.
   */
  private readonly decided = new Map<string, Promise<unknown>>();
  private readonly onDecision: DecisionCallback | undefined;
  /**
   * Whether the adapter asks before_agent_reply and observes the LLM calls (the run's options).
   * @internal Adapters' plumbing.
   */
  readonly asks: Readonly<{ agentReply: boolean; llmObservations: boolean }>;

  constructor(options: HookbusRunOptions) {
    const runId = options.runId ?? randomUUID();
    checkIdLimit("runId", runId, DEFAULT_LIMITS.maxIdBytes);
    this.client = options.client;
    this.context = Object.freeze({
      agentId: options.agentId,
      sessionKey: options.sessionKey,
      runId,
      ...(options.channel === undefined ? {} : { channel: options.channel }),
    });
    this.approvals = options.approvals;
    this.onDecision = options.onDecision;
    this.asks = Object.freeze({
      agentReply: options.agentReply !== false,
      llmObservations: options.llmObservations !== false,
    });
  }

  /**
   * Publish an observation of this run, fire and forget: it never delays or fails the run (a
   * failure is logged on the client's logger, `what` saying what was lost).
   * @internal Adapters' plumbing: the core observes agent_end, llm_input and llm_output.
   */
  observe<H extends RunObservation>(hook: H, event: HookEventInput<H>, what: string): void {
    // observe() never throws: what fails (validation, the log away) rejects.
    // A run hook's context is the run's (RunContext), whichever H is.
    const context = this.context as HookContextInput<H>;
    this.client
      .observe(hook, context, event)
      .catch((failure: unknown) =>
        this.client.log.warn({ err: failure, hook, runId: this.context.runId }, what),
      );
  }

  /**
   * Hand a decision to the app's `onDecision`, as a frozen copy (the app cannot change what is
   * enforced); a failing callback is logged, never thrown into the run.
   * @internal Adapters' plumbing: the core reports every decision it obtains.
   */
  reportDecision(event: Omit<HookbusDecisionEvent, "context">): void {
    const callback = this.onDecision;
    if (callback === undefined) return;
    const report = (error: unknown) =>
      this.client.log.warn(
        { err: error, hook: event.hook, runId: this.context.runId },
        "onDecision threw; the run goes on",
      );
    try {
      const copy = deepFreeze(structuredClone({ ...event, context: { ...this.context } }));
      const returned = callback(copy) as unknown;
      if (isPromise(returned)) returned.catch(report);
    } catch (error) {
      report(error);
    }
  }

  /**
   * Keep what hookbus decided for a tool call until the tool executes (see takeDecided).
   * @internal Adapters' plumbing between a framework's approval step and its tool execution.
   */
  setDecided(toolCallId: string, input: Promise<unknown>): void {
    if (this.decided.size >= MAX_DECIDED_TOOL_CALLS) {
      throw limitExceeded(
        "decidedToolCalls",
        `run ${this.context.runId} holds ${MAX_DECIDED_TOOL_CALLS} decided tool calls its tools never ran: end the run (withHookbusRun) per user turn`,
        { max: MAX_DECIDED_TOOL_CALLS },
      );
    }
    // Observed here so a decision nobody takes (the framework did not run the tool) is no unhandled rejection.
    input.catch(() => {});
    this.decided.set(toolCallId, input);
  }

  /**
   * The decided input of a tool call, once; undefined when the framework's approval step did not ask.
   * @internal Adapters' plumbing (see setDecided).
   */
  takeDecided(toolCallId: string | undefined): Promise<unknown> | undefined {
    if (toolCallId === undefined) return undefined;
    const found = this.decided.get(toolCallId);
    this.decided.delete(toolCallId);
    return found;
  }

  get texts(): readonly string[] {
    return this.assistantTexts;
  }

  /** Record an assistant text of the run (bounded: a run is a turn, not a transcript). */
  addText(text: string): void {
    if (this.assistantTexts.length >= MAX_RUN_TEXTS) {
      throw limitExceeded(
        "runTexts",
        `run ${this.context.runId} has ${MAX_RUN_TEXTS} assistant texts already: end the run (withHookbusRun) per user turn`,
        { max: MAX_RUN_TEXTS },
      );
    }
    this.assistantTexts.push(text);
  }

  /** The context of a tool call of this run. */
  toolContext(toolName: string, toolCallId: string | undefined) {
    return {
      ...this.context,
      toolName,
      ...(toolCallId === undefined ? {} : { toolCallId }),
    };
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const storage = new AsyncLocalStorage<HookbusRun>();

/**
 * Run `fn` as one hookbus run: every model call and tool execution the framework starts inside
 * it (until its promise settles) belongs to this run. Consume a stream inside `fn` too. When
 * `fn`'s promise settles the run's after_llm_call gate is forgotten (its tool calls are done).
 */
export async function withHookbusRun<T>(
  options: HookbusRunOptions,
  fn: (run: HookbusRun) => T | Promise<T>,
): Promise<T> {
  const run = new HookbusRun(options);
  const started = Date.now();
  let ended: { success: true } | { success: false; error: unknown } = { success: true };
  try {
    return await storage.run(run, () => fn(run));
  } catch (error) {
    ended = { success: false, error };
    throw error;
  } finally {
    const { runId, agentId, sessionKey } = run.context;
    run.client.endRun(runId, agentId, sessionKey);
    if (options.agentEnd !== false) observeAgentEnd(run, ended, Date.now() - started);
  }
}

/** The run's agent_end observation; never delays or fails the run (logged when it fails). */
function observeAgentEnd(
  run: HookbusRun,
  ended: { success: true } | { success: false; error: unknown },
  durationMs: number,
): void {
  const error = ended.success
    ? {}
    : { error: ended.error instanceof Error ? ended.error.message : String(ended.error) };
  run.observe(
    "agent_end",
    { success: ended.success, ...error, durationMs },
    "agent_end was not recorded; the run's outcome stands",
  );
}

/** The run this code executes in, if any. */
export function currentHookbusRun(): HookbusRun | undefined {
  return storage.getStore();
}

/** The run this code executes in; HOOKBUS_NO_RUN outside one (adapters never guess a run). */
export function requireHookbusRun(where: string): HookbusRun {
  const run = storage.getStore();
  if (run !== undefined) return run;
  throw new HookbusError(
    "HOOKBUS_NO_RUN",
    `${where} was called outside a hookbus run: call the framework, and consume its stream, inside withHookbusRun({ client, agentId, sessionKey }, fn)`,
  );
}
