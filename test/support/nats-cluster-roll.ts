/**
 * A rolling restart of a test cluster, node by node, the way an operator upgrades one
 * (docs/operations.md, "Upgrading a cluster"):
 *
 * 1. the node's stream leaderships and the meta leadership are stepped down (JetStream API), so
 *    the Raft groups elect a leader elsewhere while the node still answers;
 * 2. lame-duck mode (SIGUSR2, as `nats-server --signal ldm=<pid>`): the node hands its remaining
 *    leaderships away and tells its clients, which move (src/bus/lame-duck-move.ts);
 * 3. once its clients have left (or `moveMs` passed), SIGTERM, and wait for the exit;
 * 4. start it again (the "new version"), and wait until it has rejoined: its `/healthz` is ok
 *    (meta and every stream it hosts are current) and every stream has a leader and current
 *    replicas again. Only then the next node.
 *
 * Every wait is bounded; a step that runs out throws with what it waited for.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, type StreamInfo } from "@nats-io/jetstream";
import type { ClusterNode, NatsCluster } from "./nats-cluster.js";

export interface RollOptions {
  /** A connection to the cluster that fails over (it must outlive each node's stop). */
  nc: NatsConnection;
  /** How long clients get to move off a node in lame-duck mode before SIGTERM (default 3 s). */
  moveMs?: number;
  /** Bound on each other wait: a step-down, the exit, the rejoin (default 30 s). */
  stepTimeoutMs?: number;
  /** Told each step as it happens (timestamps for the chaos run's faults.log). */
  log?: (line: string) => void;
}

export interface NodeRoll {
  node: string;
  /** Milliseconds from the first step-down until the node served again with streams current. */
  ms: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Restarts every node of `cluster` in turn; resolves with how long each took. */
export async function rollCluster(cluster: NatsCluster, options: RollOptions): Promise<NodeRoll[]> {
  const rolls: NodeRoll[] = [];
  for (const node of cluster.nodes) rolls.push(await rollNode(cluster, node, options));
  return rolls;
}

export async function rollNode(
  cluster: NatsCluster,
  node: ClusterNode,
  options: RollOptions,
): Promise<NodeRoll> {
  const log = options.log ?? (() => {});
  const timeout = options.stepTimeoutMs ?? 30_000;
  const started = Date.now();
  await stepDownLeaders(cluster, node, options.nc, timeout, log);
  log(`${node.name}: lame-duck mode`);
  node.signal("SIGUSR2");
  await waitFor(
    async () => (await connections(node)) === 0,
    options.moveMs ?? 3000,
    () => `${node.name}: clients still connected`,
  ).catch(() => log(`${node.name}: clients still connected after the move time`));
  log(`${node.name}: SIGTERM`);
  node.signal("SIGTERM");
  await waitFor(
    () => Promise.resolve(!node.running()),
    timeout,
    () => `${node.name} to exit after SIGTERM`,
  );
  await node.exited();
  await node.start();
  log(`${node.name}: started again`);
  await waitFor(
    () => healthy(node),
    timeout,
    () => `${node.name}: /healthz ok`,
  );
  await waitFor(
    () => streamsCurrent(options.nc, cluster.nodes.length),
    timeout,
    () => `every stream led, with current replicas, after ${node.name} rejoined`,
  );
  log(`${node.name}: rejoined, streams current`);
  return { node: node.name, ms: Date.now() - started };
}

/** Moves the meta leadership and every stream leadership `node` holds to another node. */
async function stepDownLeaders(
  cluster: NatsCluster,
  node: ClusterNode,
  nc: NatsConnection,
  timeout: number,
  log: (line: string) => void,
): Promise<void> {
  if ((await metaLeader(cluster)) === node.name) {
    log(`${node.name}: meta leader steps down`);
    await nc.request("$JS.API.META.LEADER.STEPDOWN", "", { timeout: 5000 });
    await waitFor(
      async () => {
        const leader = await metaLeader(cluster);
        return leader !== undefined && leader !== node.name;
      },
      timeout,
      () => `a meta leader other than ${node.name}`,
    );
  }
  for (const stream of await streams(nc)) {
    if (stream.cluster?.leader !== node.name) continue;
    const name = stream.config.name;
    log(`${node.name}: leader of ${name} steps down`);
    await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${name}`, "", { timeout: 5000 });
    await waitFor(
      async () => {
        const info = await jetstreamManager(nc, { timeout: 2000 }).then((jsm) =>
          jsm.streams.info(name),
        );
        const leader = info.cluster?.leader;
        return leader !== undefined && leader !== node.name;
      },
      timeout,
      () => `a leader of ${name} other than ${node.name}`,
    );
  }
}

async function streams(nc: NatsConnection): Promise<StreamInfo[]> {
  const jsm = await jetstreamManager(nc, { timeout: 5000 });
  const all: StreamInfo[] = [];
  for await (const info of jsm.streams.list()) all.push(info);
  return all;
}

/** Every stream has a leader and `size - 1` replicas, all current (R3 on three nodes). */
async function streamsCurrent(nc: NatsConnection, size: number): Promise<boolean> {
  for (const info of await streams(nc)) {
    const replicas = Math.min(info.config.num_replicas, size);
    if (replicas <= 1) continue;
    const peers = info.cluster?.replicas ?? [];
    if (info.cluster?.leader === undefined || peers.length !== replicas - 1) return false;
    if (peers.some((peer) => !peer.current || peer.offline === true)) return false;
  }
  return true;
}

async function monitor<T>(node: ClusterNode, path: string): Promise<T | undefined> {
  try {
    const res = await fetch(`${node.monitorUrl}${path}`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? ((await res.json()) as T) : undefined;
  } catch {
    return undefined;
  }
}

async function metaLeader(cluster: NatsCluster): Promise<string | undefined> {
  for (const node of cluster.nodes.filter((n) => n.running())) {
    const jsz = await monitor<{ meta_cluster?: { leader?: string } }>(node, "/jsz");
    if (jsz?.meta_cluster?.leader !== undefined) return jsz.meta_cluster.leader;
  }
  return undefined;
}

async function connections(node: ClusterNode): Promise<number> {
  const connz = await monitor<{ num_connections: number }>(node, "/connz");
  return connz?.num_connections ?? 0;
}

async function healthy(node: ClusterNode): Promise<boolean> {
  return (await monitor<{ status: string }>(node, "/healthz"))?.status === "ok";
}

async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: () => string,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`waited ${timeoutMs} ms for ${what()}`);
    await sleep(100);
  }
}
