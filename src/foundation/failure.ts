/**
 * Turning what goes wrong at the CLI's edges into coded one-line errors that say the fix. A raw
 * `ConnectionError`, `getaddrinfo ENOTFOUND` or `TypeError: Invalid URL` tells an operator what
 * broke inside the client, not what to do; these say both.
 */
import { HookbusError, isHookbusError, type ErrorCode } from "./errors.js";

const START_NATS = "start nats-server -js or set --server/NATS_URL";

function systemCode(error: unknown): string | undefined {
  const own = (error as { code?: unknown } | null)?.code;
  if (typeof own === "string") return own;
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof cause === "string" ? cause : undefined;
}

function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

/** Whether a failed connect is worth retrying (the server may come up) or is fatal (bad input). */
export function isRetryableConnectFailure(error: HookbusError): boolean {
  return error.code === "HOOKBUS_NATS_UNREACHABLE";
}

/** A connect failure as a coded error naming the server and the fix. */
export function connectFailure(error: unknown, servers: readonly string[]): HookbusError {
  if (isHookbusError(error)) return error;
  const where = servers.join(",");
  const code = systemCode(error);
  const name = errorName(error);
  if (code === "ERR_INVALID_URL" || (error instanceof TypeError && /url/i.test(error.message))) {
    return new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `invalid NATS URL ${JSON.stringify(where)}: use nats://HOST:PORT (comma-separated for several) in --server/NATS_URL`,
      { argument: "server" },
      error,
    );
  }
  if (name === "AuthorizationError" || name === "UserAuthenticationExpiredError") {
    return new HookbusError(
      "HOOKBUS_NATS_AUTH",
      `NATS at ${where} refused the credentials (${(error as Error).message}): check --creds/NATS_CREDS, NATS_USER/NATS_PASSWORD or NATS_TOKEN`,
      { server: where },
      error,
    );
  }
  const reason =
    code === "ENOTFOUND" || code === "EAI_AGAIN"
      ? "unknown host"
      : code === "ECONNREFUSED"
        ? "connection refused"
        : name === "TimeoutError"
          ? "timed out"
          : error instanceof Error
            ? error.message
            : String(error);
  const fix = reason === "unknown host" ? "check the host name in --server/NATS_URL" : START_NATS;
  return new HookbusError(
    "HOOKBUS_NATS_UNREACHABLE",
    `cannot reach NATS at ${where} (${reason}): ${fix}`,
    { server: where, reason },
    error,
  );
}

/** A file the user named that cannot be read, as a coded error. */
export function unreadableFile(
  path: string,
  what: string,
  error: unknown,
  code: ErrorCode = "HOOKBUS_INVALID_ARGUMENT",
): HookbusError {
  const system = systemCode(error);
  const reason =
    system === "ENOENT"
      ? "no such file"
      : system === "EACCES"
        ? "permission denied"
        : system === "EISDIR"
          ? "is a directory"
          : (error as Error).message;
  return new HookbusError(
    code,
    `cannot read ${what} ${path} (${reason}): check the path`,
    { argument: what, path },
    error,
  );
}

/**
 * The one line `hookbus` prints for an error a command did not code itself. System errors a user
 * can fix (a missing file, a closed pipe) get words; anything else is a bug and says so.
 */
export function describeUncoded(error: unknown): HookbusError {
  if (isHookbusError(error)) return error;
  const code = systemCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === "ENOENT" || code === "EACCES" || code === "EISDIR") {
    return new HookbusError("HOOKBUS_INVALID_ARGUMENT", `${message}: check the path`, {}, error);
  }
  return new HookbusError(
    "HOOKBUS_INTERNAL",
    `${message} (run again with --debug or HOOKBUS_DEBUG=1 for the stack trace, and please report it)`,
    {},
    error,
  );
}
