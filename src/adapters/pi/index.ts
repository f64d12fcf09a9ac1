/**
 * `hookbus/pi`: hookbus for pi agents (`@mariozechner/pi-agent-core`). See docs/adapters/pi.md.
 *
 * ```ts
 * const agent = new Agent({ initialState: { model, tools } });
 * attachHookbus(agent);
 * await withHookbusRun({ client, agentId, sessionKey }, () => agent.prompt("tidy up"));
 * ```
 */
export { attachHookbus, type AttachHookbusOptions } from "./agent.js";
export * from "../core/run-api.js";
export type { StreamCadence } from "../core/stream-windows.js";
