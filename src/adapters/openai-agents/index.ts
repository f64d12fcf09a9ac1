/**
 * `hookbus/openai-agents`: hookbus for the OpenAI Agents SDK (`@openai/agents`). See
 * docs/adapters/openai-agents.md.
 *
 * ```ts
 * const agent = new Agent({
 *   name: "support",
 *   model: hookbusModel(yourModel, { name: "gpt-5" }),
 *   tools: hookbusTools([exec, readFile]),
 * });
 * await withHookbusRun({ client, agentId, sessionKey }, () => run(agent, "tidy up"));
 * ```
 */
export { hookbusModel, MAX_HELD_STREAM_EVENTS, type HookbusModelOptions } from "./model.js";
export {
  hookbusTool,
  hookbusTools,
  INPUT_GUARDRAIL_NAME,
  type HookbusToolOptions,
  MAX_PENDING_TOOL_CALLS,
  OUTPUT_GUARDRAIL_NAME,
} from "./tools.js";
export * from "../core/run-api.js";
export type { StreamCadence } from "../core/stream-windows.js";
