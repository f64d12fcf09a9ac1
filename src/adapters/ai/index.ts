/**
 * `hookbus/ai`: hookbus for the Vercel AI SDK (`ai` 7). See docs/adapters/ai-sdk.md.
 *
 * ```ts
 * const model = wrapLanguageModel({ model: yourModel, middleware: hookbusMiddleware() });
 * const tools = hookbusTools({ exec, read_file });
 * await withHookbusRun({ client, agentId, sessionKey }, () =>
 *   generateText({ model, tools, prompt, stopWhen: stepCountIs(5) }),
 * );
 * ```
 */
export { hookbusMiddleware, type HookbusMiddlewareOptions } from "./middleware.js";
export { hookbusTools } from "./tools.js";
export { hookbusToolApproval, type ToolApprovalOptions } from "./approval.js";
export * from "../core/run-api.js";
export type { StreamCadence } from "../core/stream-windows.js";
