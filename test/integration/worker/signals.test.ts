/**
 * A worker process with `handleSignals`: SIGTERM/SIGINT drain in-flight requests (they are
 * answered), then the process exits with 0; a second signal exits at once with 1.
 */
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectTo,
  PolicyAskClient,
  toolContext,
  toolEvent,
  uniqueNamespace,
  until,
  useNatsServer,
} from "./harness.js";
import { startChild } from "../../support/child.js";

const fixture = fileURLToPath(new URL("./fixtures/signal-worker.ts", import.meta.url));

const nats = useNatsServer();
let nc: NatsConnection;
const children: ChildProcess[] = [];

beforeAll(async () => {
  nc = await connectTo(nats.url());
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await nc?.drain();
});

function startWorker(namespace: string, handlerMs: number, twoRunners = false) {
  const worker = startChild(["--import", "tsx", fixture], {
    NATS_URL_FOR_WORKER: nats.url(),
    WORKER_NAMESPACE: namespace,
    HANDLER_MS: String(handlerMs),
    TWO_RUNNERS: twoRunners ? "1" : "0",
  });
  children.push(worker.child);
  return worker;
}

describe("handleSignals", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal} answers the in-flight request, then exits with 0`, async () => {
      const namespace = uniqueNamespace("sig");
      const worker = startWorker(namespace, 800);
      await until(
        () => worker.output().includes("ready"),
        15_000,
        `worker ready (stderr: ${worker.errors()})`,
      );
      const client = await PolicyAskClient.open(nc, namespace);

      const pending = client.request("graceful", "before_tool_call", {
        event: toolEvent(),
        context: toolContext(),
      });
      await until(() => worker.output().includes("started"), 5000, "handler started");
      worker.child.kill(signal);

      const answer = await pending;
      expect(answer.reply.verdict).toEqual({
        block: true,
        blockReason: "graceful answered while draining",
      });
      expect(await worker.exited).toBe(0);
    });
  }

  it("drains every runner of the process before it exits", async () => {
    const namespace = uniqueNamespace("sig");
    const worker = startWorker(namespace, 400, true);
    await until(
      () => worker.output().includes("ready"),
      15_000,
      `worker ready (stderr: ${worker.errors()})`,
    );
    const client = await PolicyAskClient.open(nc, namespace);
    const ask = (policy: string) =>
      client.request(policy, "before_tool_call", { event: toolEvent(), context: toolContext() });
    const pending = [ask("graceful"), ask("slower")];
    await until(
      () =>
        worker.output().includes("started graceful") && worker.output().includes("started slower"),
      5000,
      "both handlers started",
    );
    worker.child.kill("SIGTERM");
    const answers = await Promise.all(pending);
    expect(answers.map((a) => a.reply.verdict)).toEqual([
      { block: true, blockReason: "graceful answered while draining" },
      { block: true, blockReason: "slower answered while draining" },
    ]);
    expect(await worker.exited).toBe(0);
  });

  it("a second signal exits at once with 1", async () => {
    const namespace = uniqueNamespace("sig");
    const worker = startWorker(namespace, 60_000);
    await until(() => worker.output().includes("ready"), 15_000, "worker ready");
    const client = await PolicyAskClient.open(nc, namespace);
    const pending = client
      .request(
        "graceful",
        "before_tool_call",
        { event: toolEvent(), context: toolContext() },
        2_000,
      )
      .catch((e: unknown) => e);
    await until(() => worker.output().includes("started"), 5000, "handler started");
    worker.child.kill("SIGTERM");
    // "Nothing happens within 200 ms" (a legit sleep): the first SIGTERM does not end the process
    // while its handler runs.
    await new Promise((r) => setTimeout(r, 200));
    expect(worker.child.exitCode).toBeNull(); // still draining
    const started = Date.now();
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
    await pending;
  });
});
