/**
 * The baseline the benchmark compares hookbus against: the same shape built straight on the NATS
 * client — request → fan-out to 3 responders → JetStream publish → reply — with no validation,
 * no merge, no registry, no codec. Each role is its own function, so the same code runs with all
 * roles in one process (`startBaseline`) or one role per process (bench/baseline-role.ts).
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";

export const BASELINE_POLICIES = ["p1", "p2", "p3"] as const;

/** Where one baseline lives: its subjects' prefix and its log stream. */
export interface BaselineNames {
  prefix: string;
  stream: string;
}

export const IN_PROCESS_BASELINE: BaselineNames = {
  prefix: "bench.baseline",
  stream: "BENCH_BASELINE",
};

export interface Baseline {
  call(body: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** A role that serves until stopped. */
export interface BaselineRole {
  stop(): Promise<void>;
}

const encoder = new TextEncoder();

/** One responder: answers its policy's requests with an empty verdict. */
export function serveResponder(
  nc: NatsConnection,
  policy: string,
  names: BaselineNames,
): BaselineRole {
  const sub = nc.subscribe(`${names.prefix}.policy.${policy}`, {
    queue: policy,
    callback: (_e, msg) => {
      msg.respond(encoder.encode(JSON.stringify({ policy, verdict: null })));
    },
  });
  return {
    stop: () => {
      sub.unsubscribe();
      return Promise.resolve();
    },
  };
}

/**
 * The coordinator's equivalent: creates the log stream, then asks every responder, publishes one
 * record and answers. Stopping it deletes the stream.
 */
export async function serveCoordinator(
  nc: NatsConnection,
  names: BaselineNames,
): Promise<BaselineRole> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: names.stream,
    subjects: [`${names.prefix}.log.>`],
    storage: "file",
    duplicate_window: 120_000_000_000,
  });
  const js = jetstream(nc);
  let seq = 0;
  const sub: Subscription = nc.subscribe(`${names.prefix}.call`, {
    queue: "coordinators",
    callback: (_e, msg) => {
      void (async () => {
        const verdicts = await Promise.all(
          BASELINE_POLICIES.map((p) =>
            nc
              .request(`${names.prefix}.policy.${p}`, msg.data, { timeout: 5000 })
              .then((m) => m.json()),
          ),
        );
        const record = encoder.encode(JSON.stringify({ call: msg.json(), verdicts }));
        await js.publish(`${names.prefix}.log.calls`, record, { msgID: `b${++seq}` });
        msg.respond(encoder.encode(JSON.stringify({ decision: { outcome: "allow" } })));
      })();
    },
  });
  return {
    async stop() {
      sub.unsubscribe();
      await jsm.streams.delete(names.stream).catch(() => {});
    },
  };
}

/** The caller's side: one request per call. */
export function baselineCaller(
  nc: NatsConnection,
  names: BaselineNames,
): (body: unknown) => Promise<unknown> {
  return async (body) =>
    (
      await nc.request(`${names.prefix}.call`, encoder.encode(JSON.stringify(body)), {
        timeout: 5000,
      })
    ).json();
}

/** Every role in this process, each on its own connection. */
export async function startBaseline(
  agent: NatsConnection,
  coordinator: NatsConnection,
  worker: NatsConnection,
  names: BaselineNames = IN_PROCESS_BASELINE,
): Promise<Baseline> {
  const roles = [
    await serveCoordinator(coordinator, names),
    ...BASELINE_POLICIES.map((p) => serveResponder(worker, p, names)),
  ];
  return {
    call: baselineCaller(agent, names),
    async stop() {
      // Responders first, the coordinator (which deletes the stream) last, as before.
      for (const role of roles.reverse()) await role.stop();
    },
  };
}
