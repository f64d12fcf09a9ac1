/**
 * The cases that start, stop, kill and reconnect: two instances in one queue group, observations
 * through the durable consumer, drain on SIGTERM, a NATS restart, and a crash mid-observation.
 */
import { randomUUID } from "node:crypto";
import { answering, type Case } from "./cases.js";
import { equal, eventually, fail, verdictOf } from "./expect.js";
import { exitWithin } from "./processes.js";
import { action, context } from "./samples.js";
import { OBSERVE_ACK_WAIT_MS, type Setup } from "./setup.js";

const START_MS = 30_000;

async function observe(setup: Setup, tool: string, params: Record<string, unknown>) {
  const ctx = context();
  const eventId = `obs-${randomUUID()}`;
  await setup.client.observe("after_tool_call", ctx, { toolName: tool, params }, { eventId });
  return { sessionKey: ctx.sessionKey, eventId };
}

async function observedTimes(setup: Setup, sessionKey: string, eventId: string): Promise<number> {
  const seen = await setup.readState(sessionKey, "observed");
  return Array.isArray(seen) ? seen.filter((id) => id === eventId).length : 0;
}

export const LIFECYCLE_CASES: Case[] = [
  {
    name: "queue group: two instances share work, each request answered once",
    async run(setup) {
      const second = setup.startWorker();
      try {
        const pids = new Set<unknown>();
        const until = Date.now() + START_MS;
        while (pids.size < 2) {
          if (Date.now() > until) fail(`only ${pids.size} instance answered`);
          const batch = await Promise.all(
            Array.from({ length: 20 }, () =>
              setup.probe.ask({
                hook: "before_tool_call",
                body: action("conformance_whoami", {}),
                timeoutMs: 2000,
                windowMs: 1500,
              }),
            ),
          );
          for (const replies of batch) {
            const verdict = verdictOf(replies, setup.policy, "before_tool_call") as
              { params?: { pid?: unknown } } | undefined;
            pids.add(verdict?.params?.pid);
          }
        }
      } finally {
        second.signal("SIGTERM");
        await exitWithin(second, 10_000);
      }
    },
  },
  {
    name: "observation: delivered through the durable consumer, acked once",
    async run(setup) {
      const { sessionKey, eventId } = await observe(setup, "conformance_observe", {});
      await eventually(
        async () => ((await observedTimes(setup, sessionKey, eventId)) > 0 ? true : undefined),
        10_000,
        "the observation was not handled",
      );
      // Past the ack wait: an observation that was not acked would be delivered again.
      await new Promise((r) => setTimeout(r, OBSERVE_ACK_WAIT_MS + 1000));
      equal(await observedTimes(setup, sessionKey, eventId), 1, "times handled");
    },
  },
  {
    name: "drain on SIGTERM: in-flight request answered, then exit 0",
    async run(setup) {
      const [worker] = setup.workers.filter((w) => w.child.exitCode === null);
      if (worker === undefined) fail("no running worker");
      const asked = setup.probe.ask({
        hook: "before_tool_call",
        body: action("conformance_sleep", { ms: 800 }),
        timeoutMs: 5000,
        windowMs: 3000,
      });
      await new Promise((r) => setTimeout(r, 200));
      worker.signal("SIGTERM");
      verdictOf(await asked, setup.policy, "before_tool_call");
      const code = await exitWithin(worker, 10_000);
      if (code !== 0) fail(`exited with ${String(code ?? "nothing within 10 s")}`);
      setup.startWorker();
      await answering(setup, START_MS);
    },
  },
  {
    name: "reconnect after a NATS restart",
    async run(setup) {
      await setup.nats.kill();
      await new Promise((r) => setTimeout(r, 500));
      await setup.nats.start();
      await answering(setup, 20_000);
    },
  },
  {
    name: "observation: redelivered after a crash, handled once",
    async run(setup) {
      const running = setup.workers.filter((w) => w.child.exitCode === null);
      // Slow enough to be killed mid-handler.
      const { sessionKey, eventId } = await observe(setup, "conformance_sleep", { ms: 1500 });
      await new Promise((r) => setTimeout(r, 700));
      for (const worker of running) worker.signal("SIGKILL");
      await Promise.all(running.map((w) => w.exited));
      if ((await observedTimes(setup, sessionKey, eventId)) !== 0)
        fail("handled before the crash; the case needs a slower handler");
      setup.startWorker();
      await eventually(
        async () => ((await observedTimes(setup, sessionKey, eventId)) > 0 ? true : undefined),
        20_000,
        "the observation was not redelivered",
      );
      await new Promise((r) => setTimeout(r, OBSERVE_ACK_WAIT_MS + 2000));
      equal(await observedTimes(setup, sessionKey, eventId), 1, "times handled");
    },
  },
];
