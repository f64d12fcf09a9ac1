/**
 * What the agent knows of the registry, for the fast path: when the current policy set has no
 * policy for a hook (in any mode: shadow policies must be asked and recorded too), the call is
 * answered locally with `allow`. The client watches the registry KV key, so a policy applied
 * later is honoured from the next call after the watch delivers it (milliseconds).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { ModifyingHookName } from "../catalog/catalog.js";
import type { Subjects } from "../bus/subjects.js";
import { RegistryStore } from "../registry/store.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import type { RedactionRule } from "../log/redaction.js";

export interface RegistryView {
  /** True when a call of this hook must go to a coordinator. */
  needsRoundTrip(hook: ModifyingHookName): boolean;
  /** The registry revision the view reflects; undefined when it knows none. */
  readonly revision: number | undefined;
  stop(): Promise<void>;
}

/** No fast path: every call goes to a coordinator (`fastPath: false`). */
export const ALWAYS_ROUND_TRIP: RegistryView = {
  needsRoundTrip: () => true,
  revision: undefined,
  stop: () => Promise.resolve(),
};

/** A fixed snapshot (tests and the fast-path benchmark). */
export function staticRegistryView(snapshot: RegistrySnapshot): RegistryView {
  return {
    needsRoundTrip: (hook) => snapshot.hasPolicies(hook),
    revision: snapshot.revision,
    stop: () => Promise.resolve(),
  };
}

export class WatchedRegistryView implements RegistryView {
  private snapshot: RegistrySnapshot | undefined;
  private stopWatch: (() => Promise<void>) | undefined;

  private constructor() {}

  /** Resolves once the current revision is known (RegistryStore.watch delivers it first). */
  static async start(
    nc: NatsConnection,
    subjects: Subjects,
    logger: Logger,
  ): Promise<WatchedRegistryView> {
    const view = new WatchedRegistryView();
    const store = await RegistryStore.open(nc, subjects);
    view.stopWatch = await store.watch((snapshot) => {
      view.snapshot = snapshot;
      logger.debug({ revision: snapshot.revision }, "agent sees registry revision");
    }, logger);
    return view;
  }

  needsRoundTrip(hook: ModifyingHookName): boolean {
    // Not known (stopped): never answer locally, a coordinator decides.
    return this.snapshot === undefined || this.snapshot.hasPolicies(hook);
  }

  get revision(): number | undefined {
    return this.snapshot?.revision;
  }

  /** The registry's redaction rules in force (applied to the observations the agent writes). */
  redactionRules(): readonly RedactionRule[] | undefined {
    return this.snapshot?.document.redact;
  }

  async stop(): Promise<void> {
    this.snapshot = undefined;
    const stop = this.stopWatch;
    this.stopWatch = undefined;
    await stop?.();
  }
}
