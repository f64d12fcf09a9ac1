/**
 * A nats-server started with the configuration `hookbus auth` generates, and connections as its
 * users (through the CLI's connection options: `--nkey FILE --inbox-prefix P`), plus the checks
 * that prove a denial: the server's "Permissions Violation" for exactly that subject.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  connect,
  PermissionViolationError,
  type NatsConnection,
  type Subscription,
} from "@nats-io/transport-node";
import { afterAll, beforeAll } from "vitest";
import { generateAuth, type GeneratedAuth } from "../../../src/auth/generate.js";
import { parseAuthDescription, type AuthDescriptionInput } from "../../../src/auth/description.js";
import type { AuthRole } from "../../../src/auth/description.js";
import { connectionOptions } from "../../../src/bus/connect.js";
import { findNatsServer, type NatsServerHandle } from "../../../src/testing/nats.js";

export interface AuthServer {
  url(): string;
  generated(): GeneratedAuth;
  /** Connect as a user of the description, with its seed file and inbox prefix. */
  as(role: AuthRole, name: string): Promise<NatsConnection>;
}

/** One server per file, configured by `hookbus auth` from `description`. */
export function useAuthServer(description: AuthDescriptionInput): AuthServer {
  let server: NatsServerHandle | undefined;
  let generated: GeneratedAuth | undefined;
  const dir = mkdtempSync(join(tmpdir(), "hookbus-auth-"));
  const connections: NatsConnection[] = [];
  beforeAll(async () => {
    generated = generateAuth(parseAuthDescription(description), {
      configFile: join(dir, "nats-auth.conf"),
      keyDir: join(dir, "keys"),
    });
    const conf = join(dir, "server.conf");
    writeFileSync(conf, `include "nats-auth.conf"\n`);
    server = await findNatsServer({ own: true, args: ["-c", conf] });
  }, 30_000);
  afterAll(async () => {
    await Promise.all(connections.splice(0).map((c) => c.close()));
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);
  const url = () => {
    if (server === undefined) throw new Error("no server yet");
    return server.url;
  };
  const gen = () => {
    if (generated === undefined) throw new Error("no configuration yet");
    return generated;
  };
  return {
    url,
    generated: gen,
    async as(role, name) {
      const user = gen().users.find((u) => u.role === role && u.name === name);
      if (user === undefined) throw new Error(`no ${role} ${name} in the description`);
      const nc = await connect({
        ...connectionOptions(
          { server: url(), nkey: user.keyFile, "inbox-prefix": user.inboxPrefix, name },
          {},
        ),
        maxReconnectAttempts: 3,
      });
      connections.push(nc);
      return nc;
    },
  };
}

const DENIAL_TIMEOUT_MS = 5000;

/** Resolves with the server's permission violation for `subject` (publish or subscription). */
function violation(
  nc: NatsConnection,
  operation: "publish" | "subscription",
  subject: string,
): Promise<PermissionViolationError> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${operation} violation for ${subject}`)),
      DENIAL_TIMEOUT_MS,
    );
    void (async () => {
      for await (const status of nc.status()) {
        if (
          status.type === "error" &&
          status.error instanceof PermissionViolationError &&
          status.error.operation === operation &&
          status.error.subject === subject
        ) {
          clearTimeout(timer);
          resolve(status.error);
          return;
        }
      }
    })();
  });
}

/** A plain publish the server refuses (it says so; the message goes nowhere). */
export async function publishDenied(
  nc: NatsConnection,
  subject: string,
  options: { reply?: string } = {},
): Promise<PermissionViolationError> {
  const denied = violation(nc, "publish", subject);
  nc.publish(subject, "forged", options);
  return denied;
}

/** A request whose publish the server refuses: the client rejects it with the violation. */
export async function requestDenied(
  nc: NatsConnection,
  subject: string,
  data: string | Uint8Array = "",
): Promise<PermissionViolationError> {
  try {
    await nc.request(subject, data, { timeout: DENIAL_TIMEOUT_MS });
  } catch (error) {
    // nats.js wraps it in a RequestError whose cause is the server's violation.
    const cause = error instanceof PermissionViolationError ? error : (error as Error).cause;
    if (cause instanceof PermissionViolationError && cause.subject === subject) return cause;
    throw error;
  }
  throw new Error(`request to ${subject} was answered`);
}

/** A subscription the server refuses: it closes with the violation and never delivers. */
export async function subscribeDenied(
  nc: NatsConnection,
  subject: string,
  queue?: string,
): Promise<PermissionViolationError> {
  const denied = violation(nc, "subscription", subject);
  const sub: Subscription = nc.subscribe(subject, queue === undefined ? {} : { queue });
  const error = await denied;
  await sub.closed;
  return error;
}
