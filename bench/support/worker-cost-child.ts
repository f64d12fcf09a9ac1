/**
 * The child side of bench/worker-cost.ts: one process serving the bench policy with the
 * `runPolicy` of a given compiled `src` directory (or a constant responder when none is given),
 * and measuring its own cost between `<ns>.cost.start` and `<ns>.cost.stop`.
 */
import { Session } from "node:inspector/promises";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { CostMeter } from "./cost.js";
import {
  summarizeHeapProfile,
  summarizeProfile,
  type CpuProfile,
  type HeapProfile,
} from "./profile-summary.js";

interface Build {
  runPolicy: (
    policy: unknown,
    options: { nc: NatsConnection; namespace: string },
  ) => Promise<unknown>;
  definePolicy: (definition: unknown) => unknown;
}

async function loadBuild(srcUrl: string): Promise<Build> {
  const worker = (await import(`${srcUrl}/worker/index.js`)) as Pick<Build, "runPolicy">;
  const policy = (await import(`${srcUrl}/policy/policy.js`)) as Pick<Build, "definePolicy">;
  return { runPolicy: worker.runPolicy, definePolicy: policy.definePolicy };
}

/** The bench policy (bench/support/bench-policy.ts), from the build under test. */
function benchPolicy(build: Build): unknown {
  return build.definePolicy({
    name: "p1",
    version: "1",
    hooks: {
      before_tool_call: (e: { toolName: string }) =>
        e.toolName === "exec" ? { block: true, blockReason: "no shell" } : undefined,
    },
  });
}

/** The floor: a responder that parses nothing and answers a constant, like the baseline's. */
function serveConstant(nc: NatsConnection, namespace: string): void {
  const answer = new TextEncoder().encode(JSON.stringify({ policy: "p1", version: "1" }));
  nc.subscribe(`${namespace}.policy.p1.*`, { callback: (_error, msg) => void msg.respond(answer) });
}

export async function serveWorker(
  url: string,
  namespace: string,
  srcUrl: string | undefined,
): Promise<void> {
  const nc = await connect({ servers: url });
  if (srcUrl === undefined) serveConstant(nc, namespace);
  else {
    const build = await loadBuild(srcUrl);
    await build.runPolicy(benchPolicy(build), { nc, namespace });
  }
  let finish: (() => Promise<{ cpuUs: number; bytes: number; calls: number }>) | undefined;
  let session: Session | undefined;
  nc.subscribe(`${namespace}.cost.ping`, { callback: (_e, msg) => void msg.respond("") });
  nc.subscribe(`${namespace}.cost.start`, {
    callback: (_e, msg) => {
      void (async () => {
        if (msg.string() === "profile") {
          session = new Session();
          session.connect();
          await session.post("Profiler.enable");
          await session.post("Profiler.setSamplingInterval", { interval: 100 });
          await session.post("Profiler.start");
          await session.post("HeapProfiler.startSampling", {
            samplingInterval: 1024,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          });
        }
        const meter = new CostMeter();
        let stop!: () => void;
        const stopped = new Promise<void>((resolve) => (stop = resolve));
        const measured = meter.measure(1, () => stopped);
        finish = async () => {
          stop();
          await measured;
          return meter.perCall();
        };
        msg.respond("");
      })();
    },
  });
  nc.subscribe(`${namespace}.cost.stop`, {
    callback: (_e, msg) => {
      void (async () => {
        const cost = await finish!();
        let profile: string | undefined;
        if (session !== undefined) {
          const cpu = (await session.post("Profiler.stop")) as { profile: CpuProfile };
          const heap = (await session.post("HeapProfiler.stopSampling")) as {
            profile: HeapProfile;
          };
          session.disconnect();
          session = undefined;
          profile = `${summarizeProfile(cpu.profile, 30)}\n${summarizeHeapProfile(heap.profile, 30)}`;
        }
        msg.respond(JSON.stringify({ cpuUs: cost.cpuUs, bytes: cost.bytes, profile }));
      })();
    },
  });
  await nc.flush();
}
