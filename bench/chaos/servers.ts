/**
 * The NATS under a chaos run: one private nats-server (the fault: kill -9, 1 s down, restart) or,
 * with CHAOS_CLUSTER=1, a three-node JetStream cluster on loopback (the fault: kill -9 of the node
 * leading the log stream, 1 s down, restart; the other two keep serving).
 */
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { startNatsCluster } from "../../test/support/nats-cluster.js";
import { rollCluster, type NodeRoll } from "../../test/support/nats-cluster-roll.js";
import { findNatsServer } from "../../src/testing/nats.js";

export interface ChaosNats {
  /** For NATS_URL and connections: every node's URL, comma-separated. */
  url: string;
  servers: string[];
  /** Stream and bucket replicas the roles create (3 on the cluster). */
  replicas: number;
  /**
   * Kill -9 one server (the log stream's leader on a cluster), wait `downMs`, start it again.
   * Returns what was killed and when service should be back: on a single server its restart, on a
   * cluster the kill itself (the other nodes elect a new leader meanwhile).
   */
  fault(
    nc: NatsConnection,
    logStream: string,
    downMs: number,
  ): Promise<{ what: string; from: number; electedAt?: number }>;
  /**
   * On a cluster: restart every node in turn the way an operator upgrades one (step-downs, lame
   * duck, SIGTERM, restart, rejoin; test/support/nats-cluster-roll.ts). Undefined on one server.
   */
  roll?: (nc: NatsConnection, log: (line: string) => void) => Promise<NodeRoll[]>;
  stop(): Promise<void>;
}

export async function startChaosNats(cluster: boolean): Promise<ChaosNats> {
  if (!cluster) {
    const server = await findNatsServer({ own: true });
    return {
      url: server.url,
      servers: [server.url],
      replicas: 1,
      async fault(_nc, _stream, downMs) {
        await server.kill();
        await new Promise((r) => setTimeout(r, downMs));
        await server.start();
        return { what: "nats-server", from: Date.now() };
      },
      stop: () => server.stop(),
    };
  }
  const nodes = await startNatsCluster(3);
  return {
    url: nodes.urls().join(","),
    servers: nodes.urls(),
    replicas: 3,
    async fault(nc, logStream, downMs) {
      const leaderOf = () =>
        jetstreamManager(nc, { timeout: 1000 })
          .then((jsm) => jsm.streams.info(logStream))
          .then((info) => info.cluster?.leader)
          .catch(() => undefined);
      const leader = await leaderOf();
      const node = nodes.nodes.find((n) => n.name === leader) ?? nodes.nodes[0]!;
      const at = Date.now();
      await node.kill();
      // The election: from the kill until the log stream answers with a leader again (polled).
      const elected = (async () => {
        for (const until = at + 30_000; Date.now() < until;) {
          const now = await leaderOf();
          if (now !== undefined && (now !== node.name || node.running())) return Date.now();
          await new Promise((r) => setTimeout(r, 100));
        }
        return undefined;
      })();
      await new Promise((r) => setTimeout(r, downMs));
      await node.start();
      const electedAt = await elected;
      return {
        what: `node ${node.name}${node.name === leader ? " (log stream leader)" : ""}`,
        from: at,
        ...(electedAt === undefined ? {} : { electedAt }),
      };
    },
    roll: (nc, log) => rollCluster(nodes, { nc, log }),
    stop: () => nodes.stop(),
  };
}
