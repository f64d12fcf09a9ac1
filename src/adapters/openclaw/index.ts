/**
 * `hookbus/openclaw`: the OpenClaw plugin (OpenClaw 2026.9). The plugin folder
 * `plugins/openclaw/` (its manifest and entry) loads `hookbusOpenClawPlugin` from here; see
 * docs/adapters/openclaw.md.
 */
export {
  hookbusOpenClawPlugin,
  hookbusOpenClawPlugin as default,
  registerHookbus,
  closeOpenClawClient,
  OPENCLAW_PLUGIN_ID,
} from "./plugin.js";
export {
  DEFAULT_OPENCLAW_TIMEOUT_MS,
  MAX_OPENCLAW_TIMEOUT_MS,
  OpenClawPluginConfig,
  parsePluginConfig,
} from "./config.js";
export { NO_SESSION } from "./mapping.js";
export type { OpenClawPluginApi } from "./host.js";
