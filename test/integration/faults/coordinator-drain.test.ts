/**
 * A coordinator started with the CLI (`hookbus coordinator`) drains on SIGTERM: it stops taking
 * new calls, answers the call in flight only after its record is stored, and exits with 0.
 */
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  definePolicy,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
  type PolicyRunner,
} from "../../../src/index.js";
import {
  applyRegistry,
  decisionsOf,
  sleep,
  startChild,
  toolCtx,
  toolEvent,
  uniqueNamespace,
  until,
  type Child,
  useNatsServer,
} from "./harness.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));

const nats = useNatsServer();
const children: Child[] = [];
let runner: PolicyRunner | undefined;
let standby: Coordinator | undefined;
let client: HookbusClient | undefined;

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await client?.close();
  await standby?.stop();
  await runner?.stop();
});

const connection = () => nats.connect();

describe("hookbus coordinator (CLI) on SIGTERM", () => {
  it("answers the call in flight with its record stored, takes no new calls, and exits 0", async () => {
    const namespace = uniqueNamespace("drain");
    const bus = await applyRegistry(await connection(), namespace, {
      policies: [
        {
          name: "slow",
          hooks: ["before_tool_call"],
          priority: 10,
          timeoutMs: 4000,
          failMode: "fail-closed",
        },
      ],
    });
    const started: string[] = [];
    const handlerMs = 1500;
    const slow = definePolicy({
      name: "slow",
      hooks: {
        async before_tool_call(event, _ctx, { callId }) {
          started.push(callId);
          if (callId === "in-flight") await sleep(handlerMs); // held in flight through the drain
          return { block: true, blockReason: `slow says no to ${event.toolCallId}` };
        },
      },
    });
    runner = await runPolicy(slow, {
      nc: await connection(),
      namespace,
      state: new MemorySessionStateStore(),
    });

    const coordinator = startChild(
      [
        cli,
        "coordinator",
        "--server",
        nats.url(),
        "--namespace",
        namespace,
        "--id",
        "cli-coordinator",
      ],
      { LOG_LEVEL: "info" },
    );
    children.push(coordinator);
    await until(
      () => coordinator.output().includes("coordinator ready"),
      20_000,
      `CLI coordinator ready (stdout: ${coordinator.output()} stderr: ${coordinator.errors()})`,
    );

    client = await HookbusClient.connect({ nc: await connection(), namespace, timeoutMs: 5000 });
    const inFlight = client.call("before_tool_call", toolCtx("tc-1"), toolEvent("tc-1"), {
      callId: "in-flight",
    });
    await until(() => started.includes("in-flight"), 5000, "the slow handler started");

    // A second coordinator takes over new calls while the first drains.
    standby = await startCoordinator({ nc: await connection(), namespace, id: "standby" });
    const signalledAt = Date.now();
    coordinator.child.kill("SIGTERM");
    await until(() => coordinator.output().includes("draining"), 5000, "the CLI logs draining");
    // "Nothing happens within 200 ms" (a legit sleep): the coordinator does not exit while its
    // call is in flight (the handler holds it for 1.5 s).
    await sleep(200);
    expect(coordinator.child.exitCode).toBeNull(); // still finishing the call in flight

    // New calls go to the standby, not to the draining coordinator.
    const during = await client.call("before_tool_call", toolCtx("tc-2"), toolEvent("tc-2"), {
      callId: "during-drain",
    });
    expect(during.decision).toMatchObject({ outcome: "block" });
    const [duringRecord] = await decisionsOf(bus, "during-drain");
    expect(duringRecord?.coordinator).toBe("standby");

    // The call in flight is answered by the draining coordinator, after its record was stored.
    const result = await inFlight;
    expect(result.source).toBe("coordinator");
    expect(result.decision).toMatchObject({
      outcome: "block",
      blockReason: "slow says no to tc-1",
      blockedBy: "slow",
    });
    expect(result.recordSeq).toBeGreaterThan(0);
    const records = await decisionsOf(bus, "in-flight");
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      coordinator: "cli-coordinator",
      decision: result.decision,
      outcomes: [{ policy: "slow", status: "ok", effect: "applied" }],
    });

    expect(await coordinator.exited).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(handlerMs + 3000);
    expect(coordinator.errors()).not.toMatch(/Error/);
  });
});
