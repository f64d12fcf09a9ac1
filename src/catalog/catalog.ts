/**
 * The hook catalog: one entry per interception point of an agent loop. The TypeScript types of
 * events, verdicts and decisions are inferred from these schemas, so there is no second copy to
 * drift. Adding a hook is adding an entry here and, for a modifying hook, a merge declaration in
 * `src/merge/declarations.ts`.
 */
import type { z } from "zod";
import { RunContext, SessionContext, ToolContext } from "./context.js";
import * as afterLlmCall from "./hooks/after-llm-call.js";
import * as beforeAgentReply from "./hooks/before-agent-reply.js";
import * as beforeLlmCall from "./hooks/before-llm-call.js";
import * as beforeResponseEmit from "./hooks/before-response-emit.js";
import * as beforeToolCall from "./hooks/before-tool-call.js";
import * as beforeToolResult from "./hooks/before-tool-result.js";
import * as observe from "./hooks/observational.js";

export type FailMode = "fail-open" | "fail-closed";

interface ModifyingSpec<
  C extends z.ZodType,
  E extends z.ZodType,
  V extends z.ZodType,
  D extends z.ZodType,
> {
  kind: "modifying";
  fires: string;
  context: C;
  event: E;
  verdict: V;
  decision: D;
  /** What a failed policy (error, timeout, invalid verdict, no worker) does when its registry entry says nothing. */
  defaultFailMode: FailMode;
}

interface ObservationalSpec<C extends z.ZodType, E extends z.ZodType> {
  kind: "observational";
  fires: string;
  context: C;
  event: E;
}

function modifying<
  C extends z.ZodType,
  E extends z.ZodType,
  V extends z.ZodType,
  D extends z.ZodType,
>(spec: Omit<ModifyingSpec<C, E, V, D>, "kind">): ModifyingSpec<C, E, V, D> {
  return { kind: "modifying", ...spec };
}

function observational<C extends z.ZodType, E extends z.ZodType>(
  spec: Omit<ObservationalSpec<C, E>, "kind">,
): ObservationalSpec<C, E> {
  return { kind: "observational", ...spec };
}

export const modifyingHooks = {
  before_agent_reply: modifying({
    fires: "after commands are handled, before the agent/LLM runs",
    context: RunContext,
    ...beforeAgentReply,
    // A short-circuit helper (wizard, approval prompt), not a gate: if it fails the agent runs as usual.
    defaultFailMode: "fail-open",
  }),
  before_llm_call: modifying({
    fires: "before every LLM API call, including each tool-loop iteration",
    context: RunContext,
    ...beforeLlmCall,
    // Input shaping; the hard tool gates come after (after_llm_call, before_tool_call).
    defaultFailMode: "fail-open",
  }),
  after_llm_call: modifying({
    fires: "after the LLM answered, before any tool runs",
    context: RunContext,
    ...afterLlmCall,
    defaultFailMode: "fail-closed", // a tool gate
  }),
  before_tool_call: modifying({
    fires: "before one tool executes",
    context: ToolContext,
    ...beforeToolCall,
    defaultFailMode: "fail-closed", // a tool gate
  }),
  before_tool_result: modifying({
    fires: "after a tool ran, before its result reaches the model",
    context: ToolContext,
    ...beforeToolResult,
    // The gate on what tools feed the model (injection, secrets): an output gate of the tool.
    defaultFailMode: "fail-closed",
  }),
  before_response_emit: modifying({
    fires: "when the final assistant text is chosen, before delivery",
    context: RunContext,
    ...beforeResponseEmit,
    defaultFailMode: "fail-closed", // an output gate
  }),
} as const;

export const observationalHooks = {
  after_tool_call: observational({
    fires: "after a tool ran, or was blocked",
    context: ToolContext,
    event: observe.afterToolCall,
  }),
  llm_input: observational({
    fires: "as a prompt is sent to the LLM",
    context: RunContext,
    event: observe.llmInput,
  }),
  llm_output: observational({
    fires: "as the LLM's answer arrives",
    context: RunContext,
    event: observe.llmOutput,
  }),
  session_start: observational({
    fires: "when a session starts or resumes",
    context: SessionContext,
    event: observe.sessionStart,
  }),
  session_end: observational({
    fires: "when a session ends",
    context: SessionContext,
    event: observe.sessionEnd,
  }),
  agent_end: observational({
    fires: "when a run of the agent ends",
    context: RunContext,
    event: observe.agentEnd,
  }),
} as const;

export const catalog = { ...modifyingHooks, ...observationalHooks } as const;

export type ModifyingHookName = keyof typeof modifyingHooks;
export type ObservationalHookName = keyof typeof observationalHooks;
export type HookName = keyof typeof catalog;

export const MODIFYING_HOOK_NAMES = Object.keys(modifyingHooks) as ModifyingHookName[];
export const OBSERVATIONAL_HOOK_NAMES = Object.keys(observationalHooks) as ObservationalHookName[];
export const HOOK_NAMES = Object.keys(catalog) as HookName[];

export function isHookName(name: unknown): name is HookName {
  return typeof name === "string" && Object.hasOwn(catalog, name);
}

export function isModifyingHook(name: unknown): name is ModifyingHookName {
  return typeof name === "string" && Object.hasOwn(modifyingHooks, name);
}

/** The event a hook carries, as a policy handler receives it (after validation). */
export type HookEvent<H extends HookName> = z.output<(typeof catalog)[H]["event"]>;
/** The context a hook carries. */
export type HookContext<H extends HookName> = z.output<(typeof catalog)[H]["context"]>;
/** What a policy may return for a modifying hook. Extra fields are a compile error and a runtime `HOOKBUS_INVALID_VERDICT`. */
export type Verdict<H extends ModifyingHookName> = z.input<(typeof modifyingHooks)[H]["verdict"]>;
/** The merged decision the agent receives. */
export type Decision<H extends ModifyingHookName> = z.output<
  (typeof modifyingHooks)[H]["decision"]
>;

/** Every field that some verdict or decision of the catalog has. */
type CatalogVerdictKey = {
  [H in ModifyingHookName]:
    | keyof z.input<(typeof modifyingHooks)[H]["verdict"]>
    | keyof z.output<(typeof modifyingHooks)[H]["decision"]>;
}[ModifyingHookName];

/**
 * What a handler of hook H may return: `Verdict<H>`, with every *other* catalog field (another
 * hook's verdict field, or a decision field such as `outcome`) declared `?: never`.
 *
 * TypeScript does not run excess-property checks on object literals returned from a function
 * that is only contextually typed (the inferred return type loses its freshness, TS #241/#7547),
 * and union-normalised returns (`if (x) return {block: true}; return {content: "x"}`) even pass
 * the weak-type check. Without this, `{ block: true, content: "x" }` from a before_tool_call
 * handler compiles and only fails at run time as HOOKBUS_INVALID_VERDICT. Names that no hook uses
 * (typos) are still caught only when the literal shares no field with the verdict; the runtime
 * check (strict verdict schemas) catches the rest.
 */
export type HandlerVerdict<H extends ModifyingHookName> = Verdict<H> & {
  [K in Exclude<CatalogVerdictKey, keyof Verdict<H>>]?: never;
};

/**
 * One handler per hook, typed from the catalog. Returning nothing means "no opinion".
 * Returning a field that another hook's verdict (or a decision) has is a compile error, see
 * `HandlerVerdict`.
 */
export type PolicyHandler<H extends ModifyingHookName> = (
  event: HookEvent<H>,
  context: HookContext<H>,
) => HandlerVerdict<H> | undefined | void | Promise<HandlerVerdict<H> | undefined | void>;

export type ObservationHandler<H extends ObservationalHookName> = (
  event: HookEvent<H>,
  context: HookContext<H>,
) => void | Promise<void>;

export type PolicyHandlers = {
  [H in ModifyingHookName]?: PolicyHandler<H>;
} & {
  [H in ObservationalHookName]?: ObservationHandler<H>;
};
