/** The policy worker: serves policies on NATS, scaled by starting more (docs/policy-workers.md). */
export {
  runPolicy,
  DEFAULT_CONCURRENCY,
  type PolicyRunner,
  type RunPolicyOptions,
} from "./runner.js";
export { observerDurableName, DEFAULT_OBSERVE_OPTIONS, type ObserveOptions } from "./observer.js";
