/**
 * The discovery protocol: every worker and coordinator subscribes (no queue group) to
 * `<ns>.discover` and `<ns>.discover.<role>` and answers each request with a JSON description of
 * itself. An operator's tool sends one request and collects replies until they stop coming
 * (request-many with a stall timer), within a hard deadline and a cap on replies.
 */
import { hostname } from "node:os";
import {
  NoRespondersError,
  RequestError,
  TimeoutError,
  type Msg,
  type NatsConnection,
  type Subscription,
} from "@nats-io/transport-node";
import type { Logger } from "pino";
import { DiscoveryReply, type DiscoveryRole } from "./discovery-schema.js";

export const DISCOVERY_DEFAULTS = {
  /** The request's hard deadline. */
  maxWaitMs: 2000,
  /** Stop once no reply came for this long after the last one. */
  stallMs: 300,
  /** Stop after this many replies. */
  maxReplies: 10_000,
} as const;

export function discoverySubject(namespace: string, role?: DiscoveryRole): string {
  return role === undefined ? `${namespace}.discover` : `${namespace}.discover.${role}`;
}

/** The fields every description shares, fixed when the process starts. */
export function processIdentity(namespace: string) {
  return {
    namespace,
    host: hostname().slice(0, 256),
    pid: process.pid,
    startedAt: new Date().toISOString(),
  };
}

export interface DiscoveryResponder {
  stop(): Promise<void>;
}

/**
 * Answer discovery requests with `describe()`. Requests that arrive while a description is being
 * built share it, so a burst of requests costs one description.
 */
export function serveDiscovery(
  nc: NatsConnection,
  namespace: string,
  role: DiscoveryRole,
  describe: () => DiscoveryReply | Promise<DiscoveryReply>,
  logger?: Logger,
): DiscoveryResponder {
  let building: Promise<Uint8Array> | undefined;
  const encodeDescription = (): Promise<Uint8Array> => {
    building ??= Promise.resolve()
      .then(describe)
      .then((reply) => new TextEncoder().encode(JSON.stringify(reply)))
      .finally(() => (building = undefined));
    return building;
  };
  const answer = (error: Error | null, msg: Msg): void => {
    if (error !== null || msg.reply === undefined || msg.reply === "") return;
    encodeDescription().then(
      (data) => {
        try {
          msg.respond(data);
        } catch {
          // The connection closed meanwhile: nobody to tell.
        }
      },
      (e: unknown) => logger?.warn({ err: e }, "cannot describe this process for discovery"),
    );
  };
  const subscriptions: Subscription[] = [
    nc.subscribe(discoverySubject(namespace), { callback: answer }),
    nc.subscribe(discoverySubject(namespace, role), { callback: answer }),
  ];
  return {
    async stop() {
      // Best effort on stop: a closed connection has nothing to drain.
      const undrained = (error: unknown) =>
        logger?.debug({ err: error }, "discovery subscription did not drain");
      await Promise.all(subscriptions.map((s) => s.drain().catch(undrained)));
    },
  };
}

export interface DiscoverOptions {
  role?: DiscoveryRole;
  maxWaitMs?: number;
  stallMs?: number;
  maxReplies?: number;
}

export interface Discovered {
  replies: DiscoveryReply[];
  /** Replies that were not a valid description (another version, another program). */
  invalid: number;
  /**
   * The server said nobody subscribes (no responders): nothing of that role is running. Without
   * it, a round with no reply means something listens but did not answer in time (a coordinator
   * busy loading a large Cedar set, for one).
   */
  nobodyListens?: true;
}

/** Ask every live worker and/or coordinator of the namespace to describe itself. */
export async function discover(
  nc: NatsConnection,
  namespace: string,
  options: DiscoverOptions = {},
): Promise<Discovered> {
  const maxWait = options.maxWaitMs ?? DISCOVERY_DEFAULTS.maxWaitMs;
  const maxReplies = options.maxReplies ?? DISCOVERY_DEFAULTS.maxReplies;
  const found: Discovered = { replies: [], invalid: 0 };
  try {
    const replies = await nc.requestMany(discoverySubject(namespace, options.role), "{}", {
      strategy: "stall",
      stall: options.stallMs ?? DISCOVERY_DEFAULTS.stallMs,
      maxWait,
      maxMessages: maxReplies,
    });
    for await (const msg of replies) {
      const parsed = parseReply(msg);
      if (parsed === undefined) found.invalid++;
      else found.replies.push(parsed);
      if (found.replies.length + found.invalid >= maxReplies) break;
    }
  } catch (error) {
    // No responders (nobody is running) or the deadline: what came so far is the answer. Any
    // other failure (a closed connection, no permission) is thrown: "nothing is running" would
    // be a false answer.
    if (!isNoAnswer(error)) throw error;
    if (isNoResponders(error)) found.nobodyListens = true;
  }
  return found;
}

function isNoResponders(error: unknown): boolean {
  return (
    error instanceof NoRespondersError || (error instanceof RequestError && error.isNoResponders())
  );
}

function isNoAnswer(error: unknown): boolean {
  return isNoResponders(error) || error instanceof TimeoutError;
}

function parseReply(msg: Msg): DiscoveryReply | undefined {
  if (msg.data.length === 0) return undefined;
  try {
    const result = DiscoveryReply.safeParse(JSON.parse(new TextDecoder().decode(msg.data)));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

export const UNVERSIONED = "unversioned";

/** Live workers per policy name, with the versions they serve. */
export function workersByPolicy(
  replies: readonly DiscoveryReply[],
): Map<string, { count: number; versions: Set<string> }> {
  const byPolicy = new Map<string, { count: number; versions: Set<string> }>();
  for (const reply of replies) {
    if (reply.role !== "worker") continue;
    for (const policy of reply.policies) {
      const entry = byPolicy.get(policy.name) ?? { count: 0, versions: new Set<string>() };
      entry.count++;
      entry.versions.add(policy.version ?? UNVERSIONED);
      byPolicy.set(policy.name, entry);
    }
  }
  return byPolicy;
}
