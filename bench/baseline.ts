/**
 * The baseline the benchmark compares hookbus against: the same shape built straight on the NATS
 * client — request → fan-out to 3 responders → JetStream publish → reply — with no validation,
 * no merge, no registry, no codec.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";

const PREFIX = "bench.baseline";
const STREAM = "BENCH_BASELINE";
const POLICIES = ["p1", "p2", "p3"];

export interface Baseline {
  call(body: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

export async function startBaseline(
  agent: NatsConnection,
  coordinator: NatsConnection,
  worker: NatsConnection,
): Promise<Baseline> {
  const jsm = await jetstreamManager(coordinator);
  await jsm.streams.add({
    name: STREAM,
    subjects: [`${PREFIX}.log.>`],
    storage: "file",
    duplicate_window: 120_000_000_000,
  });
  const js = jetstream(coordinator);
  const encoder = new TextEncoder();
  const subs: Subscription[] = [];

  for (const policy of POLICIES) {
    subs.push(
      worker.subscribe(`${PREFIX}.policy.${policy}`, {
        queue: policy,
        callback: (_e, msg) => {
          msg.respond(encoder.encode(JSON.stringify({ policy, verdict: null })));
        },
      }),
    );
  }

  let seq = 0;
  subs.push(
    coordinator.subscribe(`${PREFIX}.call`, {
      queue: "coordinators",
      callback: (_e, msg) => {
        void (async () => {
          const verdicts = await Promise.all(
            POLICIES.map((p) =>
              coordinator
                .request(`${PREFIX}.policy.${p}`, msg.data, { timeout: 5000 })
                .then((m) => m.json()),
            ),
          );
          const record = encoder.encode(JSON.stringify({ call: msg.json(), verdicts }));
          await js.publish(`${PREFIX}.log.calls`, record, { msgID: `b${++seq}` });
          msg.respond(encoder.encode(JSON.stringify({ decision: { outcome: "allow" } })));
        })();
      },
    }),
  );

  return {
    call: async (body) =>
      (
        await agent.request(`${PREFIX}.call`, encoder.encode(JSON.stringify(body)), {
          timeout: 5000,
        })
      ).json(),
    async stop() {
      for (const sub of subs) sub.unsubscribe();
      await jsm.streams.delete(STREAM).catch(() => {});
    },
  };
}
