/** The services' logger: pino, NDJSON on stdout, with the level checked before pino throws on it. */
import { pino, type Logger } from "pino";
import { HookbusError } from "../foundation/errors.js";

const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** `stream: 2` logs to stderr, for commands whose stdout is a protocol channel (mcp-proxy). */
export function serviceLogger(
  flag: string | undefined,
  env = process.env,
  stream: 1 | 2 = 1,
): Logger {
  const level = flag ?? env.LOG_LEVEL ?? "info";
  if (!(LEVELS as readonly string[]).includes(level)) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--log-level must be one of ${LEVELS.join(", ")}, got ${JSON.stringify(level)} (from ${flag === undefined ? "LOG_LEVEL" : "--log-level"})`,
      { argument: "log-level" },
    );
  }
  return stream === 1 ? pino({ level }) : pino({ level }, pino.destination(2));
}
