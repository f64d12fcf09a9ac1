/** How every CLI command and service reaches NATS: flags first, then environment, then defaults. */
import { readFileSync } from "node:fs";
import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from "@nats-io/transport-node";
import { checkInboxPrefix } from "../auth/inbox.js";
import { readNkeySeed } from "../auth/seed.js";

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
  if (creds !== undefined && creds !== "")
    options.authenticator = credsAuthenticator(readFileSync(creds));
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

export function connectNats(flags: ConnectionFlags = {}): Promise<NatsConnection> {
  return connect(connectionOptions(flags));
}
