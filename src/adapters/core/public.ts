/** What every adapter's entry point (`hookbus/ai`, `hookbus/openai-agents`, ...) exports of the run core. */
export {
  closeSharedHookbusClient,
  currentHookbusRun,
  HookbusRun,
  requireHookbusRun,
  sharedHookbusClient,
  withHookbusRun,
  type HookbusRunOptions,
  type RunIdentity,
} from "./index.js";
