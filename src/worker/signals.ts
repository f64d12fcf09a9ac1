/**
 * SIGTERM/SIGINT for a worker process: the first signal drains every runner that asked for
 * signal handling (each request already received is answered) and exits with 0 once all of them
 * are done; a second one while draining gives up and exits with 1, so an operator (or an
 * orchestrator's kill timeout) can always end a stuck worker. One process-wide handler serves
 * all runners, so a process running several of them never exits while one is still draining.
 */
import type { Logger } from "pino";

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

export interface ShutdownHooks {
  logger: Logger;
  graceful: () => Promise<void>;
  abort: () => void;
}

const registered = new Set<ShutdownHooks>();
let draining = false;

function onSignal(signal: NodeJS.Signals): void {
  const runners = [...registered];
  const logger = runners[0]?.logger;
  if (draining) {
    logger?.warn({ signal }, "second signal: exiting without waiting for in-flight handlers");
    for (const runner of runners) runner.abort();
    process.exit(1);
  }
  draining = true;
  logger?.info({ signal }, "signal received: draining in-flight work before exit");
  Promise.all(runners.map((runner) => runner.graceful())).then(
    () => process.exit(0),
    (error: unknown) => {
      logger?.error({ err: error }, "drain failed");
      process.exit(1);
    },
  );
}

/** Registers a runner for signal-driven shutdown; returns a function that unregisters it. */
export function onShutdownSignals(hooks: ShutdownHooks): () => void {
  if (registered.size === 0) for (const signal of SIGNALS) process.on(signal, onSignal);
  registered.add(hooks);
  return () => {
    // While draining the handler stays: a second signal must still be able to end the process.
    if (!registered.delete(hooks) || registered.size > 0 || draining) return;
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
}
