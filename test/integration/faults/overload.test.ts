/**
 * A coordinator at its in-flight cap answers HOOKBUS_OVERLOADED at once (unrecorded) instead of
 * queueing without bound; the agent SDK re-sends the call within its deadline, so a call that
 * finds room before its deadline is answered normally, with one record.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  definePolicy,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
} from "../../../src/index.js";
import { gate } from "../../support/wait.js";
import {
  applyRegistry,
  decisionsOf,
  rejection,
  toolCtx,
  toolEvent,
  uniqueNamespace,
  until,
  useNatsServer,
} from "./harness.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";

const nats = useNatsServer();
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

describe("coordinator in-flight cap", () => {
  it("refuses calls beyond --max-in-flight with HOOKBUS_OVERLOADED; the SDK re-sends until there is room", async () => {
    const namespace = uniqueNamespace("overload");
    const admin = await nats.connect();
    const bus = await applyRegistry(admin, namespace, {
      policies: [{ name: "held", hooks: ["before_tool_call"], priority: 1, timeoutMs: 5000 }],
    });
    const coordinator = await startCoordinator({
      nc: await nats.connect(),
      namespace,
      maxInFlight: 1,
    });
    stops.push(() => coordinator.stop());
    const held = gate();
    const entered: string[] = [];
    const policy = definePolicy({
      name: "held",
      hooks: {
        async before_tool_call(_event, _ctx, { callId }) {
          entered.push(callId);
          if (callId === "first") await held.promise;
          return undefined;
        },
      },
    });
    const runner = await runPolicy(policy, {
      nc: await nats.connect(),
      namespace,
      state: new MemorySessionStateStore(),
    });
    stops.push(() => runner.stop());
    const client = await HookbusClient.connect({ nc: await nats.connect(), namespace });
    stops.push(() => client.close());

    const first = client.call("before_tool_call", toolCtx("a"), toolEvent("a"), {
      callId: "first",
      timeoutMs: 8000,
    });
    await until(() => entered.includes("first"), 5000, "the first call at its policy");
    const refused = await rejection(
      client.call("before_tool_call", toolCtx("b"), toolEvent("b"), {
        callId: "refused",
        timeoutMs: 400,
      }),
    );
    expect(refused).toMatchObject({ code: "HOOKBUS_OVERLOADED" });
    expect(entered).not.toContain("refused");
    expect(await decisionsOf(bus, "refused")).toEqual([]);

    // A call with time to wait gets in once the first is done.
    const patient = client.call("before_tool_call", toolCtx("c"), toolEvent("c"), {
      callId: "patient",
      timeoutMs: 8000,
    });
    held.open();
    await first;
    expect((await patient).decision.outcome).toBe("allow");
    expect(await decisionsOf(bus, "patient")).toHaveLength(1);
  });
});
