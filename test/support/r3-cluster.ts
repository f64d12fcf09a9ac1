/**
 * The set-up the cluster fault tests share: a three-node cluster (test/support/nats-cluster.ts)
 * for the file, streams and buckets with three replicas (HOOKBUS_REPLICAS=3, restored after),
 * connections that start at one node and fail over to the others, and the file's services
 * stopped, in reverse order, before the connections close and the cluster stops.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect } from "vitest";
import type { Bus } from "../../src/index.js";
import { startNatsCluster, type NatsCluster } from "./nats-cluster.js";
import { until } from "./wait.js";

export interface R3Cluster {
  /** The file's cluster (started in beforeAll). */
  cluster: () => NatsCluster;
  /** A connection to node `first` first, failing over to the others (as services connect). */
  connectVia: (first: number) => Promise<NatsConnection>;
  /** Stop this in afterAll, before the connections close (services started by the test). */
  onStop: (stop: () => Promise<void>) => void;
}

/** `reconnectTimeWaitMs`: the pause between reconnect attempts of connectVia's connections. */
export function useR3Cluster(options: { reconnectTimeWaitMs?: number } = {}): R3Cluster {
  let cluster: NatsCluster | undefined;
  const connections: NatsConnection[] = [];
  const stops: (() => Promise<void>)[] = [];
  const previousReplicas = process.env.HOOKBUS_REPLICAS;

  beforeAll(async () => {
    cluster = await startNatsCluster(3);
    await placesThreeReplicas(cluster);
    process.env.HOOKBUS_REPLICAS = "3";
  }, 60_000);

  afterAll(async () => {
    // Best effort: a service or connection already gone with a killed node has nothing to stop.
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => {});
    await Promise.all(connections.splice(0).map((c) => c.close().catch(() => {})));
    await cluster?.stop();
    if (previousReplicas === undefined) delete process.env.HOOKBUS_REPLICAS;
    else process.env.HOOKBUS_REPLICAS = previousReplicas;
  }, 60_000);

  const started = (): NatsCluster => {
    if (cluster === undefined) throw new Error("no cluster: call useR3Cluster() in the file");
    return cluster;
  };
  return {
    cluster: started,
    connectVia: async (first) => {
      const urls = started().urls();
      const nc = await connect({
        servers: [urls[first]!, ...urls.filter((_, i) => i !== first)],
        noRandomize: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: options.reconnectTimeWaitMs ?? 100,
      });
      connections.push(nc);
      return nc;
    },
    onStop: (stop) => stops.push(stop),
  };
}

/** The name of the node that leads the namespace's log stream. */
export async function logLeaderName(bus: Bus): Promise<string> {
  const leaderName = (await bus.jsm.streams.info(bus.subjects.logStream)).cluster?.leader;
  expect(leaderName).toBeDefined();
  return leaderName!;
}

/**
 * JetStream answering through every node (the cluster's ready()) is not yet a meta group that
 * knows every peer: an R3 stream created then can fail with "no suitable peers for placement".
 * Waits until the meta leader's /jsz lists the other two peers, current.
 */
async function placesThreeReplicas(cluster: NatsCluster): Promise<void> {
  await until(
    async () => {
      for (const node of cluster.nodes) {
        const jsz = await fetch(`${node.monitorUrl}/jsz`, { signal: AbortSignal.timeout(2000) })
          .then(
            (r) => r.json() as Promise<{ meta_cluster?: { replicas?: { current?: boolean }[] } }>,
          )
          .catch(() => undefined);
        const replicas = jsz?.meta_cluster?.replicas ?? [];
        if (replicas.length === 2 && replicas.every((r) => r.current === true)) return true;
      }
      return false;
    },
    30_000,
    "the meta leader knows both other peers",
  );
}
