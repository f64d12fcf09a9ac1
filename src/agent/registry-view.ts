/**
 * What the agent knows of the registry, for the fast path: when the current policy set has no
 * policy for a hook (in any mode: shadow policies must be asked and recorded too), the call is
 * answered locally with `allow`. The client watches the registry KV key, so a policy applied
 * later is honoured from the next call after the watch delivers it (milliseconds).
 *
 * Fail closed where the view cannot be trusted: a namespace where no registry was ever applied
 * is reported as missing (the client answers HOOKBUS_NO_REGISTRY unless told otherwise), and a
 * watch that ended is restarted with backoff; while it has been down longer than a bound, every
 * call goes to a coordinator instead of trusting a policy set that may be stale.
 *
 * The emergency stop list (registry/stops.ts) is read every 250 ms beside the watch. A call that
 * a stop in force matches (its agent, its tool by name or by class, matched exactly as the
 * coordinator matches it) never takes the fast path: it goes to a coordinator, which blocks and
 * records it. Other agents' and tools' calls keep the fast path (issue 32, item 5). While the
 * last good read started more than 750 ms ago, or the list cannot be read, no call takes the fast
 * path. The agent thus never answers `allow` locally for a stopped agent or tool.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { ModifyingHookName } from "../catalog/catalog.js";
import type { Subjects } from "../bus/subjects.js";
import { ConnectionWatch } from "../bus/connection-watch.js";
import { sameDocument } from "../registry/diff.js";
import { RegistryStore } from "../registry/store.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import type { ResponseStreaming } from "../registry/stream-entry.js";
import type { RedactionRule } from "../log/redaction.js";
import { backoffMs } from "../foundation/backoff.js";
import { AGENT_STOPS_STALE_AFTER_MS, StopListFollower, StopStore } from "../registry/stops.js";

/** A call as the stop list matches it; without one, any stop in force sends the call on. */
export interface RoutedCall {
  context: Readonly<Record<string, unknown>>;
  event: Readonly<Record<string, unknown>>;
}

export interface RegistryView {
  /** True when a call of this hook (this call, when given) must go to a coordinator. */
  needsRoundTrip(hook: ModifyingHookName, call?: RoutedCall): boolean;
  /** How a streamed final answer may show (registry/stream-entry.ts); absent: `hold`. */
  responseStreaming?(): ResponseStreaming;
  /** The registry revision the view reflects; undefined when it knows none. */
  readonly revision: number | undefined;
  /** True when the view knows that no registry was ever applied in the namespace. */
  missing?(): boolean;
  /** Whether the registry watch runs, for `client.stats()`. */
  health?(): RegistryWatchHealth;
  stop(): Promise<void>;
}

/** No fast path: every call goes to a coordinator (`fastPath: false`). */
export const ALWAYS_ROUND_TRIP: RegistryView = {
  needsRoundTrip: () => true,
  revision: undefined,
  stop: () => Promise.resolve(),
};

/** A fixed snapshot (tests and the fast-path benchmark); never reported missing. */
export function staticRegistryView(snapshot: RegistrySnapshot): RegistryView {
  return {
    needsRoundTrip: (hook) => snapshot.hasPolicies(hook),
    responseStreaming: () => snapshot.responseStreaming(),
    revision: snapshot.revision,
    stop: () => Promise.resolve(),
  };
}

export interface RegistryWatchHealth {
  watching: boolean;
  restarts: number;
  /** How long the watch has been down; undefined while it runs. */
  downForMs: number | undefined;
}

export interface WatchOptions {
  /**
   * How long the watch may be down before calls stop using the fast path (default 5000 ms). A
   * KV watch survives most faults by itself, but not all (a deleted bucket leaves it waiting
   * forever, silently), so the view also checks the key every `staleAfterMs / 2`.
   */
  staleAfterMs?: number;
  /** First delay before restarting a watch that is down; doubles up to `maxRestartDelayMs`. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
}

export const DEFAULT_STALE_AFTER_MS = 5_000;
const DEFAULT_RESTART_DELAY_MS = 100;
const DEFAULT_MAX_RESTART_DELAY_MS = 5_000;

export class WatchedRegistryView implements RegistryView {
  private snapshot: RegistrySnapshot | undefined;
  private stopWatch: (() => Promise<void>) | undefined;
  /** When the watch was first seen down; undefined while it runs. */
  private downSince: number | undefined;
  /** A revision the check read that the watch had not delivered (a second sighting is a fault). */
  private lagging: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private restartAttempt = 0;
  private restarts = 0;
  private stopped = false;
  private readonly staleAfterMs: number;
  private readonly firstRestartDelay: number;
  private readonly maxRestartDelay: number;
  private stops: StopListFollower | undefined;
  private unwatchConnection: (() => void) | undefined;

  private constructor(
    private readonly store: RegistryStore,
    /** The same bucket with requests bounded by the check interval, for checks and restarts. */
    private readonly checkStore: RegistryStore,
    private readonly logger: Logger,
    options: WatchOptions,
  ) {
    this.staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    this.firstRestartDelay = options.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS;
    this.maxRestartDelay = options.maxRestartDelayMs ?? DEFAULT_MAX_RESTART_DELAY_MS;
  }

  /** Resolves once the current revision is known (RegistryStore.watch delivers it first). */
  static async start(
    nc: NatsConnection,
    subjects: Subjects,
    logger: Logger,
    options: WatchOptions = {},
  ): Promise<WatchedRegistryView> {
    const checkMs = checkInterval(options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS);
    const view = new WatchedRegistryView(
      await RegistryStore.open(nc, subjects),
      await RegistryStore.open(nc, subjects, checkMs),
      logger,
      options,
    );
    await view.watch(view.store);
    view.schedule(view.checkInterval());
    // A stop list unreadable at start is not fatal here: every call goes to a coordinator.
    view.stops = new StopListFollower(await StopStore.open(nc, subjects), logger, {
      staleAfterMs: AGENT_STOPS_STALE_AFTER_MS,
    });
    await view.stops.start();
    // Back from a disconnect: a stop may have been stored meanwhile; re-read before trusting.
    view.unwatchConnection = ConnectionWatch.of(nc).onChange((change) => {
      if (change === "reconnect") view.stops?.reconnected();
    });
    return view;
  }

  private checkInterval(): number {
    return checkInterval(this.staleAfterMs);
  }

  private async watch(store: RegistryStore): Promise<void> {
    this.stopWatch = await store.watch(
      (snapshot) => {
        this.snapshot = snapshot;
        this.logger.debug({ revision: snapshot.revision }, "agent sees registry revision");
      },
      this.logger,
      (error) => this.down(error, "the registry watch ended"),
    );
    this.downSince = undefined;
    this.lagging = undefined;
    this.restartAttempt = 0;
  }

  private down(error: unknown, why: string): void {
    if (this.stopped) return;
    if (this.downSince === undefined) {
      this.downSince = Date.now();
      this.logger.warn({ err: error }, `${why}: restarting it`);
    }
    this.schedule(0);
  }

  /** One timer drives everything: the periodic check, and restarts (with backoff) while down. */
  private schedule(delay: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, delay);
    // The check must not keep an agent process alive on its own.
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.downSince !== undefined) {
      await this.restart();
      return;
    }
    try {
      const current = await this.checkStore.current();
      const known = this.snapshot;
      const seen = known?.revision ?? 0;
      if (current.revision < seen || (current.revision === seen && !sameAs(known, current)))
        // The bucket was deleted (and maybe recreated): the watch still waits on the old one.
        return this.down(undefined, `the registry went back from revision ${seen}`);
      if (current.revision === seen) this.lagging = undefined;
      else if (this.lagging === undefined)
        this.lagging = current.revision; // maybe in flight
      else return this.down(undefined, `the registry watch missed revision ${this.lagging}`);
    } catch (error) {
      return this.down(error, "the registry cannot be read");
    }
    this.schedule(this.checkInterval());
  }

  private async restart(): Promise<void> {
    const old = this.stopWatch;
    this.stopWatch = undefined;
    // Best effort: the broken watch is replaced whatever its stop says.
    await old?.().catch((error: unknown) => {
      this.logger.debug({ err: error }, "the broken registry watch did not stop cleanly");
    });
    if (this.stopped) return;
    this.restarts++;
    try {
      await this.watch(this.checkStore);
      this.logger.info({ revision: this.revision }, "the registry watch is back");
      this.schedule(this.checkInterval());
    } catch (error) {
      this.logger.debug({ err: error }, "restarting the registry watch failed");
      const delay = backoffMs(this.restartAttempt++, {
        firstMs: this.firstRestartDelay,
        capMs: this.maxRestartDelay,
      });
      this.schedule(delay);
    }
  }

  /** Whether the view may be trusted for the fast path right now. */
  private fresh(): boolean {
    return this.downSince === undefined || Date.now() - this.downSince <= this.staleAfterMs;
  }

  responseStreaming(): ResponseStreaming {
    const snapshot = this.snapshot;
    return snapshot === undefined || !this.fresh() ? "hold" : snapshot.responseStreaming();
  }

  needsRoundTrip(hook: ModifyingHookName, call?: RoutedCall): boolean {
    // Not known (stopped) or stale (watch down too long): a coordinator decides.
    const snapshot = this.snapshot;
    return (
      snapshot === undefined ||
      !this.fresh() ||
      snapshot.hasPolicies(hook) ||
      this.stopsMatch(snapshot, call)
    );
  }

  /**
   * A stop in force matches the call, or the list cannot be trusted: a coordinator decides (see
   * the header). The tool is classed by the same registry revision the fast path trusts.
   */
  private stopsMatch(snapshot: RegistrySnapshot, call: RoutedCall | undefined): boolean {
    const state = this.stops?.state();
    if (state === undefined) return false;
    if (!state.readable) return true;
    if (state.list.size === 0) return false;
    if (call === undefined) return true;
    // Read as the coordinator reads it (coordinator/emergency-stop.ts): the context's agent, and
    // the event's tool name, else the context's. Only here: no cost while nothing is stopped.
    const tool = call.event.toolName ?? call.context.toolName;
    const stoppable = {
      agentId: String(call.context.agentId),
      toolName: typeof tool === "string" && tool !== "" ? tool : undefined,
      vocabulary: snapshot.vocabulary,
    };
    return state.list.stopFor(stoppable) !== undefined;
  }

  missing(): boolean {
    return this.snapshot !== undefined && this.snapshot.revision === 0;
  }

  get revision(): number | undefined {
    return this.snapshot?.revision;
  }

  health(): RegistryWatchHealth {
    return {
      watching: this.downSince === undefined && this.stopWatch !== undefined,
      restarts: this.restarts,
      downForMs: this.downSince === undefined ? undefined : Date.now() - this.downSince,
    };
  }

  /** The registry's redaction rules in force (applied to the observations the agent writes). */
  redactionRules(): readonly RedactionRule[] | undefined {
    return this.snapshot?.document.redact;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.snapshot = undefined;
    this.stops?.stop();
    this.unwatchConnection?.();
    if (this.timer !== undefined) clearTimeout(this.timer);
    const stop = this.stopWatch;
    this.stopWatch = undefined;
    await stop?.();
  }
}

function sameAs(known: RegistrySnapshot | undefined, current: RegistrySnapshot): boolean {
  return known === undefined || sameDocument(known.document, current.document);
}

function checkInterval(staleAfterMs: number): number {
  return Math.max(50, Math.floor(staleAfterMs / 2));
}
