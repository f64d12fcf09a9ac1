/**
 * A coordinator's watch over its policies' workers: every interval it asks the namespace's
 * workers to describe themselves and logs, once per change, a declared policy that has no live
 * worker (and once more when one is back). Calls to such a policy get its failure mode; this makes
 * sure an operator hears of it before the audit log shows it.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import { discover } from "../observability/discovery.js";
import { workersByPolicy } from "../observability/discovery.js";

export const DEFAULT_LIVENESS_INTERVAL_MS = 15_000;

export interface LivenessCheckOptions {
  nc: NatsConnection;
  namespace: string;
  registry: () => RegistrySnapshot;
  logger: Logger;
  intervalMs?: number;
  /** Told the live worker count of every declared policy after each check. */
  onCount?: (policy: string, workers: number) => void;
}

export class WorkerLivenessCheck {
  /** Declared policies last seen without a live worker (bounded by the registry's size). */
  private readonly dead = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: LivenessCheckOptions) {}

  start(): void {
    const interval = this.options.intervalMs ?? DEFAULT_LIVENESS_INTERVAL_MS;
    const tick = () => {
      this.running = this.checkOnce()
        .catch((error: unknown) =>
          this.options.logger.debug({ err: error }, "liveness check failed"),
        )
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, interval).unref();
        });
    };
    // The first check waits one interval: workers started with the coordinator need a moment.
    this.timer = setTimeout(tick, interval).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  async checkOnce(): Promise<void> {
    const { nc, namespace, logger } = this.options;
    // Cedar policies run in the coordinator itself: they have no workers to miss.
    const declared = this.options
      .registry()
      .document.policies.filter((policy) => policy.kind !== "cedar");
    if (declared.length === 0 || nc.isClosed()) return;
    const { replies } = await discover(nc, namespace, { role: "worker", maxWaitMs: 1000 });
    if (this.stopped) return;
    const live = workersByPolicy(replies);
    const names = new Set(declared.map((p) => p.name));
    for (const name of this.dead) if (!names.has(name)) this.dead.delete(name);
    for (const policy of declared) {
      const count = live.get(policy.name)?.count ?? 0;
      this.options.onCount?.(policy.name, count);
      if (count === 0 && !this.dead.has(policy.name)) {
        this.dead.add(policy.name);
        logger.warn(
          { policy: policy.name, hooks: policy.hooks, failMode: policy.failMode ?? "hook default" },
          "declared policy has no live worker: its calls get its failure mode",
        );
      } else if (count > 0 && this.dead.delete(policy.name)) {
        logger.info({ policy: policy.name, workers: count }, "policy has live workers again");
      }
    }
  }
}
