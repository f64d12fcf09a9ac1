/**
 * `hookbus worker --max-queued N` end to end: a worker process with one handler and a queue of
 * one answers the request too many HOOKBUS_WORKER_OVERLOADED at once, and the coordinator applies
 * the policy's failure mode to it (fail-closed blocks, fail-open allows), recording the code.
 * A bad HOOKBUS_WORKER_MAX_QUEUED is refused with a coded error.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import type { Coordinator } from "../../../src/coordinator/index.js";
import { HookbusClient } from "../../../src/index.js";
import { startChild, type Child } from "../../support/child.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { decisionsOf, toolCtx, toolEvent } from "../faults/harness.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const fixture = fileURLToPath(new URL("./fixtures/held-policy.ts", import.meta.url));
const nats = useNatsServer();
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

function worker(namespace: string, release: string, extra: string[], env = {}): Child {
  const child = startChild(
    [
      cli,
      "worker",
      fixture,
      "--server",
      nats.url(),
      "--namespace",
      namespace,
      "--state",
      "memory",
      ...extra,
    ],
    { HOOKBUS_CLI_SOURCE: "1", HELD_RELEASE_FILE: release, ...env },
  );
  cleanups.push(async () => {
    if (child.child.exitCode === null) child.child.kill("SIGKILL");
    await child.exited;
  });
  return child;
}

describe("hookbus worker --max-queued", () => {
  it.each([
    ["fail-closed", "block"],
    ["fail-open", "allow"],
  ] as const)(
    "answers the request beyond its queue HOOKBUS_WORKER_OVERLOADED; the coordinator applies %s",
    async (failMode, outcome) => {
      const nc = await nats.connect();
      const namespace = uniqueNamespace("maxq");
      const release = join(mkdtempSync(join(tmpdir(), "hookbus-held-")), "release");
      await (
        await RegistryStore.open(nc, (await Bus.open(nc, { namespace })).subjects)
      ).apply({
        policies: [
          { name: "held", hooks: ["before_tool_call"], priority: 1, timeoutMs: 20_000, failMode },
        ],
      });
      const coordinator: Coordinator = await startCoordinator({ nc, namespace });
      cleanups.push(() => coordinator.stop());
      const child = worker(namespace, release, ["--concurrency", "1", "--max-queued", "1"]);
      await until(() => child.output().includes("worker ready"), 30_000, "worker ready");
      const client = await HookbusClient.connect({ nc, namespace, timeoutMs: 25_000 });
      cleanups.push(() => client.close());
      await until(() => !client.isFastPath("before_tool_call"), 5000, "registry at the client");
      await until(() => coordinator.registry().revision > 0, 5000, "registry at the coordinator");
      const call = (id: string) =>
        client
          .call("before_tool_call", toolCtx(`tc-${id}`), toolEvent(`tc-${id}`), { callId: id })
          .then((r) => ({ id, decision: r.decision }));

      const first = call("first");
      await until(() => child.errors().includes("started first"), 20_000, "first in its handler");
      // One of these two waits in the queue (of one); the other is one too many.
      const second = call("second");
      const third = call("third");
      const refused = await Promise.race([second, third]);
      expect(refused.decision.outcome).toBe(outcome);
      if (outcome === "block")
        expect(refused.decision.blockReason).toMatch(/policy "held" failed closed \(error\)/);
      const [refusedRecord] = await until(
        async () => {
          const found = await decisionsOf(await Bus.open(nc, { namespace }), refused.id);
          return found.length === 1 ? found : undefined;
        },
        10_000,
        "the refused call's record",
      );
      expect(refusedRecord!.outcomes).toMatchObject([
        {
          policy: "held",
          status: "error",
          failMode,
          effect: failMode === "fail-closed" ? "failed-closed" : "failed-open",
          error: { code: "HOOKBUS_WORKER_OVERLOADED" },
        },
      ]);
      expect(child.errors()).not.toContain(`started ${refused.id}`);

      // Released: the first and the queued one are answered by the handler itself.
      writeFileSync(release, "go");
      const answered = await Promise.all([first, second, third]);
      const queued = answered.find((a) => a.id !== "first" && a.id !== refused.id)!;
      for (const a of [answered[0], queued]) {
        expect(a.decision).toMatchObject({ outcome: "block", blockReason: "held answered" });
      }
    },
    90_000,
  );

  it("refuses a HOOKBUS_WORKER_MAX_QUEUED that is not a positive integer", async () => {
    const child = worker(uniqueNamespace("maxq"), "/nonexistent", [], {
      HOOKBUS_WORKER_MAX_QUEUED: "0",
    });
    expect(await child.exited).not.toBe(0);
    expect(child.output() + child.errors()).toMatch(/HOOKBUS_INVALID_ARGUMENT.*max-queued/);
  }, 60_000);
});
