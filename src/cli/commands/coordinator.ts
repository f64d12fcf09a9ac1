/** `hookbus coordinator`: run one coordinator until SIGTERM/SIGINT, then drain. */
import { pino } from "pino";
import { startCoordinator } from "../../coordinator/coordinator.js";
import { connectNats, type ConnectionFlags } from "../connect.js";
import { onShutdown } from "../shutdown.js";

export interface CoordinatorFlags extends ConnectionFlags {
  namespace?: string | undefined;
  "log-level"?: string | undefined;
  "log-max-age"?: string | undefined;
  "log-max-bytes"?: string | undefined;
  id?: string | undefined;
}

function numberFlag(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n))
    throw new Error(`--${name} must be a number, got ${JSON.stringify(value)}`);
  return n;
}

export async function coordinatorCommand(flags: CoordinatorFlags): Promise<number> {
  const logger = pino({ level: flags["log-level"] ?? process.env.LOG_LEVEL ?? "info" });
  const nc = await connectNats({ ...flags, name: flags.id ?? "hookbus-coordinator" });
  const maxAgeMs = numberFlag(
    flags["log-max-age"] ?? process.env.HOOKBUS_LOG_MAX_AGE_MS,
    "log-max-age",
  );
  const maxBytes = numberFlag(
    flags["log-max-bytes"] ?? process.env.HOOKBUS_LOG_MAX_BYTES,
    "log-max-bytes",
  );
  const coordinator = await startCoordinator({
    nc,
    logger,
    ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }),
    ...(flags.id === undefined ? {} : { id: flags.id }),
    log: {
      ...(maxAgeMs === undefined ? {} : { maxAgeMs }),
      ...(maxBytes === undefined ? {} : { maxBytes }),
    },
  });
  await onShutdown(logger, async () => {
    await coordinator.stop();
    await nc.drain();
  });
  return 0;
}
