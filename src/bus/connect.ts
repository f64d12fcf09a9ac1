/** How every CLI command and service reaches NATS: flags first, then environment, then defaults. */
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from "@nats-io/transport-node";
import { HookbusError } from "../foundation/errors.js";
import { retryWithBackoff } from "../foundation/backoff.js";
import {
  connectFailure,
  isRetryableConnectFailure,
  unreadableFile,
} from "../foundation/failure.js";
import { checkInboxPrefix } from "./inbox.js";
import { readNkeySeed } from "./nkey-seed.js";

export interface ConnectionFlags {
  server?: string | undefined;
  creds?: string | undefined;
  name?: string | undefined;
  /** A file holding the user's nkey seed (`hookbus auth` writes one per user). */
  nkey?: string | undefined;
  /** Where this connection's replies arrive; NATS permissions allow each role only its own prefix. */
  "inbox-prefix"?: string | undefined;
}

export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";

export function connectionOptions(
  flags: ConnectionFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): NodeConnectionOptions {
  const servers = (flags.server ?? env.NATS_URL ?? DEFAULT_NATS_URL)
    .split(",")
    .map((s) => s.trim());
  const options: NodeConnectionOptions = {
    servers,
    name: flags.name ?? "hookbus",
    // Services must outlive a NATS restart: keep reconnecting, never give up.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    // The client otherwise builds an Error (a stack trace) for every request and timeout, in case
    // it fails: a measurable share of a coordinator's CPU. hookbus errors carry codes instead.
    noAsyncTraces: true,
  };
  const creds = flags.creds ?? env.NATS_CREDS;
  if (creds !== undefined && creds !== "") {
    let bytes: Buffer;
    try {
      bytes = readFileSync(creds);
    } catch (error) {
      throw unreadableFile(creds, "creds file", error);
    }
    options.authenticator = credsAuthenticator(bytes);
  }
  if (env.NATS_USER !== undefined) {
    options.user = env.NATS_USER;
    if (env.NATS_PASSWORD !== undefined) options.pass = env.NATS_PASSWORD;
  }
  if (env.NATS_TOKEN !== undefined) options.token = env.NATS_TOKEN;
  const seed = readNkeySeed(flags.nkey ?? env.HOOKBUS_NKEY_FILE, env.HOOKBUS_NKEY_SEED);
  if (seed !== undefined) options.authenticator = nkeyAuthenticator(seed);
  const inboxPrefix = flags["inbox-prefix"] ?? env.HOOKBUS_INBOX_PREFIX;
  if (inboxPrefix !== undefined && inboxPrefix !== "")
    options.inboxPrefix = checkInboxPrefix(inboxPrefix);
  return options;
}

/** How long one connect attempt may take (a black-holed address must not hang a command). */
const ATTEMPT_TIMEOUT_MS = 5_000;

/** One attempt; a failure is a coded error that names the server and the fix. */
export async function connectNats(flags: ConnectionFlags = {}): Promise<NatsConnection> {
  const options = connectionOptions(flags);
  try {
    return await connect({ timeout: ATTEMPT_TIMEOUT_MS, ...options });
  } catch (error) {
    throw connectFailure(error, options.servers as string[]);
  }
}

export interface ConnectRetry {
  /** How long to keep trying while the server is unreachable; 0 tries once. */
  waitMs: number;
  logger: Logger;
}

export const DEFAULT_CONNECT_WAIT_MS = 30_000;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 2_000;

/**
 * For services: NATS may start after them (compose, systemd), so an unreachable server is
 * retried with backoff until `waitMs`, each failure logged. Bad input (URL, creds) fails at once.
 */
export async function connectNatsWithRetry(
  flags: ConnectionFlags,
  retry: ConnectRetry,
): Promise<NatsConnection> {
  return retryWithBackoff(() => connectNats(flags), {
    waitMs: retry.waitMs,
    firstMs: FIRST_BACKOFF_MS,
    capMs: MAX_BACKOFF_MS,
    retryable: (error) => isRetryableConnectFailure(error as HookbusError),
    onRetry: (error, next) => {
      const failure = error as HookbusError;
      retry.logger.warn({ ...next, code: failure.code }, failure.message);
    },
  });
}

/** `--connect-wait MS` / HOOKBUS_CONNECT_WAIT_MS for services (default 30 s). */
export function connectWaitMs(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const raw = flag ?? env.HOOKBUS_CONNECT_WAIT_MS;
  if (raw === undefined || raw === "") return DEFAULT_CONNECT_WAIT_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0 || ms > 3_600_000) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--connect-wait must be whole milliseconds from 0 to 3600000, got ${JSON.stringify(raw)}`,
      { argument: "connect-wait" },
    );
  }
  return ms;
}
