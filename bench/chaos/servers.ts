/**
 * The NATS under a chaos run: one private nats-server (the fault: kill -9, 1 s down, restart) or,
 * with CHAOS_CLUSTER=1, a three-node JetStream cluster on loopback (the fault: kill -9 of the node
 * leading the log stream, 1 s down, restart; the other two keep serving).
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { headers, type NatsConnection } from "@nats-io/transport-node";
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
   * Returns what was killed and when: the moment of the kill (not of the lookup before it), which
   * recoveries and the election are measured from.
   */
  fault(
    nc: NatsConnection,
    log: { stream: string; probeSubject: string },
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
        const from = Date.now();
        await server.kill();
        await new Promise((r) => setTimeout(r, downMs));
        await server.start();
        return { what: "nats-server", from };
      },
      stop: () => server.stop(),
    };
  }
  const nodes = await startNatsCluster(3);
  return {
    url: nodes.urls().join(","),
    servers: nodes.urls(),
    replicas: 3,
    async fault(nc, log, downMs) {
      const leaderOf = () =>
        jetstreamManager(nc, { timeout: 1000 })
          .then((jsm) => jsm.streams.info(log.stream))
          .then((info) => info.cluster?.leader)
          .catch(() => undefined);
      const leader = await leaderOf();
      const node = nodes.nodes.find((n) => n.name === leader) ?? nodes.nodes[0]!;
      const at = Date.now();
      await node.kill();
      const elected = leaderAnswers(nc, log.probeSubject, at + 30_000);
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

/** Probe appends: one every PROBE_EVERY_MS, each waiting PROBE_WINDOW_MS for the leader's answer. */
const PROBE_EVERY_MS = 50;
const PROBE_WINDOW_MS = 250;
/** No stream reaches this sequence: a leader must refuse the probe (JetStream error 10071). */
const IMPOSSIBLE_LAST_SEQ = String(Number.MAX_SAFE_INTEGER);

/**
 * The election, measured against its own fault: when the log stream's (new) leader first
 * answered an append. The probe is an append to a subject the log captures, fenced by a
 * `Nats-Expected-Last-Sequence` no stream can have, so only a leader answers it (followers drop
 * appends) and it answers with a refusal: nothing is stored, and the log the run checks stays the
 * calls' own. Probes overlap (a new one every 50 ms, each answered or given up after 250 ms), so
 * the figure is fine-grained, not rounded up to a poll's timeout. Undefined if no leader answered
 * by `until`.
 */
async function leaderAnswers(
  nc: NatsConnection,
  subject: string,
  until: number,
): Promise<number | undefined> {
  let answeredAt: number | undefined;
  const probes: Promise<void>[] = [];
  while (answeredAt === undefined && Date.now() < until) {
    const h = headers();
    h.set("Nats-Expected-Last-Sequence", IMPOSSIBLE_LAST_SEQ);
    probes.push(
      nc
        .request(subject, new Uint8Array(0), { timeout: PROBE_WINDOW_MS, headers: h })
        .then((reply) => {
          // Any JetStream answer (the refusal) means a leader handled the append.
          if (reply.data.length > 0) answeredAt ??= Date.now();
        })
        .catch(() => {}),
    );
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
  await Promise.all(probes);
  return answeredAt;
}
