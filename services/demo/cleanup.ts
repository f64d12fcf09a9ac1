/**
 * The demo's namespace is its own: when it is done it deletes every stream of that namespace (the
 * log, blobs, and the KV buckets behind registry, state and chain heads, plus any added later),
 * so nothing is left on the user's server.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

/** The streams a namespace owns: `<NS>_…` streams and the `KV_<ns>_…`/`OBJ_<ns>_…` buckets. */
export function ownedBy(namespace: string, stream: string): boolean {
  return (
    stream.startsWith(`${namespace.toUpperCase()}_`) ||
    stream.startsWith(`KV_${namespace}_`) ||
    stream.startsWith(`OBJ_${namespace}_`)
  );
}

/** Deletes the namespace's streams; resolves with their names. */
export async function deleteNamespace(nc: NatsConnection, namespace: string): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const deleted: string[] = [];
  for await (const name of jsm.streams.names()) {
    if (!ownedBy(namespace, name)) continue;
    await jsm.streams.delete(name);
    deleted.push(name);
  }
  return deleted;
}
