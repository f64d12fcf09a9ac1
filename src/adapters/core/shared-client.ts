/**
 * One client per process for a plugin module that may be loaded twice.
 *
 * Hosts load plugin modules more than once in one process (OpenClaw did: two module instances,
 * two clients, two after_llm_call gates, so one instance's gate never saw the other's tool
 * calls). A module-level variable is per module instance; `globalThis` is per process (realm).
 * The registry is keyed by a name the plugin chooses and holds the promise, so two loads racing
 * to connect share one connection attempt.
 */
import type { HookbusClient } from "../../agent/client.js";
import { HookbusError } from "../../foundation/errors.js";

/** Clients one process may register (a handful of plugins, never one per request). */
export const MAX_SHARED_CLIENTS = 64;

const REGISTRY = Symbol.for("hookbus.adapters.sharedClients.v1");

type Registry = Map<string, Promise<HookbusClient>>;

function registry(): Registry {
  const holder = globalThis as { [REGISTRY]?: Registry };
  holder[REGISTRY] ??= new Map();
  return holder[REGISTRY];
}

/**
 * The process's client for `key`, connected once with `connect` (later callers' `connect` is not
 * called). A failed connection is forgotten, so the next call retries.
 */
export function sharedHookbusClient(
  key: string,
  connect: () => Promise<HookbusClient>,
): Promise<HookbusClient> {
  const clients = registry();
  const existing = clients.get(key);
  if (existing !== undefined) return existing;
  if (clients.size >= MAX_SHARED_CLIENTS) {
    return Promise.reject(
      new HookbusError(
        "HOOKBUS_LIMIT_EXCEEDED",
        `${MAX_SHARED_CLIENTS} shared hookbus clients are registered already: use one key per plugin, not per request`,
        { limit: "sharedClients", max: MAX_SHARED_CLIENTS },
      ),
    );
  }
  const connecting = connect();
  clients.set(key, connecting);
  connecting.catch(() => {
    if (clients.get(key) === connecting) clients.delete(key);
  });
  return connecting;
}

/** Close and forget the process's client for `key` (at plugin unload or shutdown). */
export async function closeSharedHookbusClient(key: string): Promise<void> {
  const clients = registry();
  const client = clients.get(key);
  if (client === undefined) return;
  clients.delete(key);
  await (await client).close();
}
