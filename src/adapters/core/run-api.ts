/** The run API every adapter subpath (`hookbus/ai`, `hookbus/pi`) re-exports beside its own. */
export {
  currentHookbusRun,
  HookbusRun,
  requireHookbusRun,
  withHookbusRun,
  type AdapterDecisionSource,
  type DecisionCallback,
  type FrameworkApprovals,
  type HookbusDecisionEvent,
  type HookbusRunOptions,
  type RunIdentity,
} from "./run.js";
export { closeSharedHookbusClient, sharedHookbusClient } from "./shared-client.js";
