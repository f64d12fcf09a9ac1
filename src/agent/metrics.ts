/**
 * An agent's own metrics for Prometheus: answers the fast path gave locally (no policy on the
 * hook) are not recorded anywhere, so this counter is the only trace of them.
 */
import { Counter, Registry } from "prom-client";

export interface FastPathCounted {
  readonly fastPathAnswers: number;
}

/** Register `hookbus_agent_fast_path_answers_total` for `client` in `registry` (a new one by default). */
export function agentMetrics(
  client: FastPathCounted,
  registry: Registry = new Registry(),
): Registry {
  new Counter({
    name: "hookbus_agent_fast_path_answers_total",
    help: "Calls answered allow locally because no policy is registered for their hook (not recorded).",
    registers: [registry],
    collect() {
      // The client counts; the metric reads it at scrape time.
      this.reset();
      this.inc(client.fastPathAnswers);
    },
  });
  return registry;
}
