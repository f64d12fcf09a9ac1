/**
 * The deployment and the checks the leader-kill cluster tests share (faults/cluster and
 * faults/cluster-leader-kill): a policy that tags every call's params, served across the three
 * nodes, and the log read back through a node that never died.
 */
import { expect } from "vitest";
import {
  Bus,
  definePolicy,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
  type DecisionRecord,
} from "../../src/index.js";
import { startCoordinator } from "../../src/coordinator/coordinator.js";
import { RegistryStore } from "../../src/registry/store.js";
import { countByCallId, decisions, readLog } from "./log.js";
import type { R3Cluster } from "./r3-cluster.js";
import { until } from "./wait.js";

const tagger = definePolicy({
  name: "tagger",
  hooks: { before_tool_call: (event) => ({ params: { ...event.params, tagged: true } }) },
});

export interface TaggerDeployment {
  bus: Bus;
  /** Agents on nodes 1 and 2. */
  agents: HookbusClient[];
}

/**
 * The tagger registered (2 s timeout), coordinators on nodes 0 and 1, its worker on node 2 and
 * agents with `agentTimeoutMs` on nodes 1 and 2: every node carries some role. All are stopped
 * with the file's cluster.
 */
export async function startTaggerDeployment(
  r3: R3Cluster,
  namespace: string,
  agentTimeoutMs: number,
): Promise<TaggerDeployment> {
  const bus = await Bus.open(await r3.connectVia(0), { namespace });
  const store = await RegistryStore.open(bus.nc, bus.subjects);
  await store.apply({
    policies: [{ name: "tagger", hooks: ["before_tool_call"], priority: 5, timeoutMs: 2000 }],
  });
  for (const node of [0, 1]) {
    const coordinator = await startCoordinator({ nc: await r3.connectVia(node), namespace });
    r3.onStop(() => coordinator.stop());
  }
  const runner = await runPolicy(tagger, {
    nc: await r3.connectVia(2),
    namespace,
    state: new MemorySessionStateStore(),
  });
  r3.onStop(() => runner.stop());
  const agents = await Promise.all(
    [await r3.connectVia(1), await r3.connectVia(2)].map((nc) =>
      HookbusClient.connect({ nc, namespace, timeoutMs: agentTimeoutMs }),
    ),
  );
  for (const agent of agents) r3.onStop(() => agent.close());
  return { bus, agents };
}

/**
 * The namespace's decision records, read through a node other than `deadNode`. A restarted node
 * rejoins and JetStream may hold a new election: its API can time out briefly, so this waits.
 */
export async function decisionsViaSurvivor(
  r3: R3Cluster,
  namespace: string,
  deadNode: string,
): Promise<DecisionRecord[]> {
  const survivor = r3.cluster().nodes.findIndex((node) => node.name !== deadNode);
  const readerNc = await r3.connectVia(survivor);
  return until(
    () =>
      Bus.open(readerNc, { namespace })
        .then(async (reader) => decisions(await readLog(reader)))
        .catch(() => undefined),
    30_000,
    "the log readable through a surviving node",
  );
}

/** No call recorded twice, and every answered call recorded once with the decision it got. */
export function expectRecordedOnceAsAnswered(
  records: DecisionRecord[],
  answered: readonly { callId: string; decision?: unknown }[],
): void {
  const counts = countByCallId(records);
  for (const [callId, count] of counts) expect(count, callId).toBe(1);
  for (const a of answered) {
    expect(counts.get(a.callId), a.callId).toBe(1);
    expect(records.find((r) => r.callId === a.callId)?.decision).toEqual(a.decision);
  }
}
