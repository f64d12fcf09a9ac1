/**
 * Issue 21, finding 2: a durable on the log that someone else created first (here with a filter
 * of one agent, as the auditor did) is refused by its owner with HOOKBUS_CONSUMER_MISMATCH and
 * named by `hookbus status`, instead of the indexer indexing none of the other agents' records
 * while reporting a lag of 0, or an observer missing events.
 */
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import { afterAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { ensureLogStreams } from "../../../src/bus/streams.js";
import { startIndexer, type Indexer } from "../../../src/indexer/index.js";
import { indexerTelemetry } from "../../../src/indexer/telemetry.js";
import { definePolicy } from "../../../src/policy/policy.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";
import { readStatus } from "../../../src/status/read.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { observerDurableName, runPolicy } from "../../../src/worker/index.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";

const nats = useNatsServer();
const postgres = usePostgres();
const running: Indexer[] = [];
afterAll(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

async function openLog(prefix: string): Promise<Bus> {
  const bus = await Bus.open(await nats.connect(), { namespace: uniqueNamespace(prefix) });
  await ensureLogStreams(bus.jsm, bus.subjects);
  return bus;
}

const STATUS = { maxWaitMs: 300, stallMs: 100 };

describe("durables that check themselves", () => {
  it("the indexer refuses a durable created first with another filter, and status names it", async () => {
    const bus = await openLog("durable-idx");
    const name = `${bus.subjects.namespace}-indexer`;
    await bus.jsm.consumers.add(bus.subjects.logStream, {
      durable_name: name,
      filter_subject: bus.subjects.auditFilter({ agentId: "mallory" }),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    const { pool } = await postgres.database();
    await expect(startIndexer({ bus, pool })).rejects.toMatchObject({
      code: "HOOKBUS_CONSUMER_MISMATCH",
      details: { consumer: name },
    });
    const status = await readStatus(bus.nc, { namespace: bus.subjects.namespace, ...STATUS });
    expect(status.problems.join("\n")).toMatch(
      new RegExp(`consumer ${name} .*filter_subject.*HOOKBUS_CONSUMER_MISMATCH`),
    );
  });

  it("a running indexer whose durable is altered reports it in its metric and readiness", async () => {
    const bus = await openLog("durable-alter");
    const { pool } = await postgres.database();
    const indexer = await startIndexer({ bus, pool });
    running.push(indexer);
    const telemetry = indexerTelemetry(indexer, bus.nc);
    const metric = async () =>
      (await telemetry.metrics.getSingleMetric("hookbus_consumer_config_mismatch")?.get())
        ?.values[0]?.value;
    expect(await metric()).toBe(0);
    // What a create under the same name did on nats-server 2.9 for whoever could send it.
    await bus.jsm.consumers.update(bus.subjects.logStream, indexer.consumer, {
      filter_subject: bus.subjects.auditFilter({ agentId: "mallory" }),
    });
    expect(await metric()).toBe(1);
    expect(telemetry.ready().reasons.join()).toMatch(/HOOKBUS_CONSUMER_MISMATCH/);
    expect(await indexer.consumerMismatches()).toEqual([
      expect.stringMatching(/^filter_subject: .*mallory/),
    ]);
  });

  it("a worker refuses an observer durable someone else created, and status names it", async () => {
    const bus = await openLog("durable-obs");
    const durable = observerDurableName(bus.subjects.namespace, "taint", "after_tool_call");
    await bus.jsm.consumers.add(bus.subjects.logStream, {
      durable_name: durable,
      filter_subject: bus.subjects.auditFilter({ hook: "after_tool_call", kind: "observed" }),
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.New,
    });
    const policy = definePolicy({ name: "taint", hooks: { after_tool_call: () => undefined } });
    await expect(
      runPolicy(policy, {
        nc: bus.nc,
        namespace: bus.subjects.namespace,
        state: new MemorySessionStateStore(),
      }),
    ).rejects.toMatchObject({ code: "HOOKBUS_CONSUMER_MISMATCH" });
    const registry = await RegistryStore.open(bus.nc, bus.subjects);
    await registry.apply({
      policies: [{ name: "taint", hooks: ["before_tool_call"], priority: 1 }],
    });
    const status = await readStatus(bus.nc, { namespace: bus.subjects.namespace, ...STATUS });
    expect(status.problems.join("\n")).toMatch(new RegExp(`consumer ${durable} .*ack_policy`));
  });
});
