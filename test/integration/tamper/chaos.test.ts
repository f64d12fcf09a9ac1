/**
 * No false alarms: while an agent makes calls in a loop, a CLI coordinator is killed (SIGKILL),
 * then a CLI worker, then the NATS server is killed and restarted. Afterwards the sealer catches
 * up and `audit verify` reports zero findings and nothing unsealed: outages are not tampering.
 */
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
  type PolicyRunner,
} from "../../../src/index.js";
import {
  applyRegistry,
  sleep,
  startChild,
  toolCtx,
  toolEvent,
  uniqueNamespace,
  until,
  useNatsServer,
  type Child,
} from "../faults/harness.js";
import steady from "./fixtures/steady.js";
import { sealKey, sealedUpToNow, sealerFor } from "./harness.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { verifyLog } from "../../../src/audit/verify.js";
import { type Sealer } from "../../../src/sealer/sealer.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const steadyModule = fileURLToPath(new URL("./fixtures/steady.ts", import.meta.url));

// This file kills and restarts its server, so it must own it.
const nats = useNatsServer({ own: true });
const children: Child[] = [];
const stops: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  for (const stop of stops.reverse()) await stop().catch(() => {});
});

describe("a chaos run", () => {
  it("coordinator and worker kill -9 and a NATS restart leave verify with zero findings", async () => {
    const namespace = uniqueNamespace("sealchaos");
    const bus = await applyRegistry(await nats.connect(), namespace, {
      policies: [
        {
          name: "steady",
          hooks: ["before_tool_call"],
          priority: 10,
          timeoutMs: 800,
          failMode: "fail-closed",
        },
      ],
    });
    const server = ["--server", nats.url(), "--namespace", namespace];
    const coordinatorChild = startChild([cli, "coordinator", ...server, "--id", "doomed"], {
      LOG_LEVEL: "info",
    });
    const workerChild = startChild([cli, "worker", steadyModule, ...server], { LOG_LEVEL: "info" });
    children.push(coordinatorChild, workerChild);
    await until(
      () => coordinatorChild.output().includes("coordinator ready"),
      20_000,
      "CLI coordinator ready",
    );
    const standby: Coordinator = await startCoordinator({
      nc: await nats.connect(),
      namespace,
      id: "standby",
    });
    stops.push(() => standby.stop());
    const runner: PolicyRunner = await runPolicy(steady, {
      nc: await nats.connect(),
      namespace,
      state: new MemorySessionStateStore(),
    });
    stops.push(() => runner.stop());
    const sealer: Sealer = await sealerFor(bus, {
      leaseTtlMs: 2000,
    });
    stops.push(() => sealer.stop());
    const client = await HookbusClient.connect({
      nc: await nats.connect(),
      namespace,
      timeoutMs: 1500,
    });
    stops.push(() => client.close());

    let n = 0;
    let answered = 0;
    const t0 = Date.now();
    const loop = (async () => {
      while (Date.now() < t0 + 4500) {
        const id = `tc-${++n}`;
        const sessionKey = `s-${n % 5}`;
        await client
          .call("before_tool_call", toolCtx(id, sessionKey), toolEvent(id), {
            callId: `chaos-${n}`,
          })
          .then(() => answered++)
          .catch(() => {});
      }
    })();
    // The fault schedule itself (not a precondition): calls run between the faults.
    const chaos = (async () => {
      await sleep(800);
      coordinatorChild.child.kill("SIGKILL");
      await sleep(800);
      workerChild.child.kill("SIGKILL");
      await sleep(800);
      await nats.handle().kill();
      await sleep(300);
      await nats.handle().start();
    })();
    await Promise.all([loop, chaos]);
    expect(answered).toBeGreaterThan(10);

    await until(
      async () => {
        try {
          await sealedUpToNow(bus, 2000);
          return true;
        } catch {
          return false;
        }
      },
      40_000,
      "the sealer caught up after the chaos",
    );
    const report = await verifyLog(bus, { keys: [sealKey.publicKey] });
    expect(report.findings).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.unsealed.records).toBe(0);
    expect(report.sealed).toBe(report.records);
    expect(report.records).toBeGreaterThanOrEqual(answered);
  }, 90_000);
});
