/** The run API every adapter subpath (`hookbus/ai`, `hookbus/pi`) re-exports beside its own. */
export {
  currentHookbusRun,
  HookbusRun,
  requireHookbusRun,
  withHookbusRun,
  type FrameworkApprovals,
  type HookbusRunOptions,
  type RunIdentity,
} from "./run.js";
export { closeSharedHookbusClient, sharedHookbusClient } from "./shared-client.js";
