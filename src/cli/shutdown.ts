/** Resolves after the first SIGTERM/SIGINT has run `drain`; a second signal exits at once. */
import type { Logger } from "pino";

export function onShutdown(logger: Logger, drain: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let draining = false;
    const handler = (signal: NodeJS.Signals) => {
      if (draining) {
        logger.warn({ signal }, "second signal: exiting without draining");
        process.exit(1);
      }
      draining = true;
      logger.info({ signal }, "draining");
      drain()
        .catch((error: unknown) => logger.error({ err: error }, "drain failed"))
        .finally(() => resolve());
    };
    process.on("SIGTERM", handler);
    process.on("SIGINT", handler);
  });
}
