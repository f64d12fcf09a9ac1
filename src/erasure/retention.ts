/**
 * `hookbus erase --retention` as a library call (docs/privacy.md): erase every data key older
 * than the registry's retention rule for it, with the same three steps and erasure record as
 * `hookbus erase` (the record's `by` is `retention:<rule>`, its reason names the rule and the
 * key's age). Run by the privacy role, the only one that may delete keys, on a schedule the
 * operator keeps (cron, a systemd timer, a Kubernetes CronJob) or its own (`--every`,
 * startRetentionSchedule): each run is safe to repeat, and a run that stopped half way is
 * finished by the next.
 */
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { KV_REQUEST_TIMEOUT_MS } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import { storedDataKeys, type StoredKeyInfo } from "../privacy/data-keys.js";
import {
  DAY_MS,
  isExpired,
  ruleFor,
  type AppliedRule,
  type RetentionRules,
} from "../registry/retention.js";
import { RegistryStore } from "../registry/store.js";
import type { Bus } from "../bus/bus.js";
import { eraseDigest, type EraseOptions, type Erasure } from "./erase.js";

/** Erasures one run makes at most: the rest wait for the next run (a bound on its length). */
export const DEFAULT_MAX_ERASURES = 10_000;

export interface RetentionOptions extends EraseOptions {
  /** The rules; absent: the registry's current `retention` section. */
  rules?: RetentionRules;
  now?: Date;
  maxErasures?: number;
  /** Report what would be erased and erase nothing. */
  dryRun?: boolean;
}

export interface RetentionRun {
  /** Live keys looked at. */
  keys: number;
  /** Keys past their rule: erased (or, in a dry run, to be). */
  expired: { subject: string; rule: string; days: number; madeAt: string }[];
  erasures: Erasure[];
  /** Expired keys left for the next run (maxErasures reached). */
  deferred: number;
}

/** The registry's retention section, read as the privacy role may (a read, no create). */
export async function registryRetention(bus: Bus): Promise<RetentionRules | undefined> {
  const js = jetstream(bus.nc, { timeout: KV_REQUEST_TIMEOUT_MS });
  const kv = await new Kvm(js).open(bus.subjects.registryBucket);
  return (await new RegistryStore(kv).current()).document.retention;
}

function reasonOf(rule: AppliedRule, key: StoredKeyInfo, now: Date): string {
  const age = ((now.getTime() - key.madeAt.getTime()) / DAY_MS).toFixed(2);
  return `retention rule ${rule.name}: data keys are kept ${rule.days} days; this one was made ${key.madeAt.toISOString()} (${age} days ago)`;
}

export async function runRetention(options: RetentionOptions): Promise<RetentionRun> {
  const rules = options.rules ?? (await registryRetention(options.bus));
  const now = options.now ?? new Date();
  const max = options.maxErasures ?? DEFAULT_MAX_ERASURES;
  const run: RetentionRun = { keys: 0, expired: [], erasures: [], deferred: 0 };
  if (rules === undefined) return run;
  for await (const key of storedDataKeys(options.bus.nc, options.bus.subjects)) {
    run.keys++;
    const rule = ruleFor(rules, key.agent);
    if (rule === undefined || !isExpired(rule, key.madeAt, now)) continue;
    if (run.expired.length >= max) {
      run.deferred++;
      continue;
    }
    run.expired.push({
      subject: key.subjectHash,
      rule: rule.name,
      days: rule.days,
      madeAt: key.madeAt.toISOString(),
    });
    if (options.dryRun === true) continue;
    const erasure = await eraseDigest(
      {
        subject: key.subjectHash,
        onlyRevision: key.revision,
        target: key.target ?? "session",
        by: `retention:${rule.name}`,
        reason: reasonOf(rule, key, now),
      },
      options,
    );
    run.erasures.push(erasure);
  }
  return run;
}

/** Bounds of `--every`: a run a second at most, and at least one a week. */
export const MIN_RETENTION_EVERY_MS = 1000;
export const MAX_RETENTION_EVERY_MS = 7 * DAY_MS;

export interface RetentionScheduleOptions extends RetentionOptions {
  everyMs: number;
  /** After each run (its figures); a run that failed reports through onError instead. */
  onRun?: (run: RetentionRun) => void;
  /** A failed run (NATS or the index unavailable): the next one is tried at its time. */
  onError?: (error: unknown) => void;
}

export interface RetentionSchedule {
  /** Stop: no new run starts; resolves once a run under way has finished. */
  stop(): Promise<void>;
}

/**
 * Run retention now and then every `everyMs` until stopped (`hookbus erase --retention --every`):
 * for operators who keep a privacy process running instead of a cron line. A run never overlaps
 * the next; each is bounded by `maxErasures`.
 */
export function startRetentionSchedule(options: RetentionScheduleOptions): RetentionSchedule {
  const { everyMs } = options;
  if (!(everyMs >= MIN_RETENTION_EVERY_MS && everyMs <= MAX_RETENTION_EVERY_MS))
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `a retention schedule runs every ${MIN_RETENTION_EVERY_MS / 1000} s to 7 days`,
      { everyMs },
    );
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = runRetention({ ...options, now: new Date() })
      .then((run) => options.onRun?.(run))
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
