/**
 * The registry lives in one key of a JetStream KV bucket, so an apply is atomic (no caller ever
 * sees half a policy set) and the key's revision is the registry revision recorded with every
 * decision. Coordinators and agents watch the key and switch to a new revision for the next call.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { KV_REQUEST_TIMEOUT_MS } from "../bus/bus.js";
import { Kvm, type KV } from "@nats-io/kv";
import type { Logger } from "pino";
import { HookbusError } from "../foundation/errors.js";
import { defaultReplicas } from "../bus/streams.js";
import type { Subjects } from "../bus/subjects.js";
import { sameDocument } from "./diff.js";
import { parseRegistryDocument } from "./document.js";
import { RegistrySnapshot } from "./snapshot.js";

const KEY = "policies";
/** How often a watcher reads the key itself (a broken watch is noticed and bypassed within it). */
export const REGISTRY_CHECK_MS = 250;
/** A watch that has not delivered a revision the check found this long after is replaced. */
const WATCH_BEHIND_MS = 1000;

export async function openRegistryBucket(
  nc: NatsConnection,
  subjects: Subjects,
  timeoutMs = KV_REQUEST_TIMEOUT_MS,
): Promise<KV> {
  // history 64: the last revisions stay readable for audit ("which policy set decided this?").
  return new Kvm(jetstream(nc, { timeout: timeoutMs })).create(subjects.registryBucket, {
    history: 64,
    storage: "file",
    replicas: defaultReplicas(),
    timeout: 10_000,
  });
}

export class RegistryStore {
  constructor(private readonly kv: KV) {}

  /** `timeoutMs` bounds each request (default KV_REQUEST_TIMEOUT_MS). */
  static async open(
    nc: NatsConnection,
    subjects: Subjects,
    timeoutMs?: number,
  ): Promise<RegistryStore> {
    return new RegistryStore(await openRegistryBucket(nc, subjects, timeoutMs));
  }

  /** Validate and store a document; returns the revision in force afterwards. */
  async apply(document: unknown, source?: string): Promise<RegistrySnapshot> {
    return (await this.applyChange(document, source)).snapshot;
  }

  /**
   * Validate and store a document, unless it is the one in force: re-applying an identical file
   * keeps the revision (records, caches and `registry diff` keep pointing at the same set).
   */
  async applyChange(
    document: unknown,
    source?: string,
  ): Promise<{ snapshot: RegistrySnapshot; changed: boolean }> {
    const valid = parseRegistryDocument(document, source);
    // A stored document that fails validation (written by hand) is simply replaced; a failed read
    // is thrown, as the write would fail too.
    const current = await this.current().catch((error: unknown) => {
      if (
        error instanceof SyntaxError ||
        (error instanceof HookbusError && error.code === "HOOKBUS_INVALID_REGISTRY")
      )
        return undefined;
      throw error;
    });
    if (current !== undefined && current.revision > 0 && sameDocument(current.document, valid))
      return { snapshot: current, changed: false };
    const revision = await this.kv.put(KEY, JSON.stringify(valid));
    return { snapshot: new RegistrySnapshot(revision, valid), changed: true };
  }

  async current(): Promise<RegistrySnapshot> {
    const entry = await this.kv.get(KEY);
    if (entry === null || entry.operation !== "PUT") return RegistrySnapshot.empty();
    return new RegistrySnapshot(
      entry.revision,
      parseRegistryDocument(entry.json(), `registry revision ${entry.revision}`),
    );
  }

  /** A snapshot at a past revision (audit: what set of policies decided a recorded call). */
  async atRevision(revision: number): Promise<RegistrySnapshot | undefined> {
    if (revision === 0) return RegistrySnapshot.empty();
    const entry = await this.kv.get(KEY, { revision });
    if (entry === null || entry.operation !== "PUT") return undefined;
    return new RegistrySnapshot(entry.revision, parseRegistryDocument(entry.json()));
  }

  /**
   * The revisions the bucket still keeps (its history is 64), newest first, with when each was
   * stored; a revision that deleted the key is left out.
   */
  async revisions(): Promise<{ revision: number; storedAt: Date }[]> {
    const found: { revision: number; storedAt: Date }[] = [];
    for await (const entry of await this.kv.history({ key: KEY }))
      if (entry.operation === "PUT")
        found.push({ revision: entry.revision, storedAt: entry.created });
    return found.sort((a, b) => b.revision - a.revision);
  }

  /**
   * Keep `onChange` fed with the current snapshot; it is called once with the current revision
   * before this resolves. A revision that fails validation (written by hand, bypassing `apply`)
   * is logged and skipped: the last good policy set stays in force rather than dropping every
   * policy. `onEnd` is called if the watch ends by itself (an error, the bucket deleted) rather
   * than by the returned stop function: the caller decides whether to start another.
   *
   * A KV watch can break without ending (its consumer deleted or stalled: nats.js notices only
   * after two missed 30 s heartbeats), so the key is also read every `checkMs`: a newer revision
   * found that way is put in force at once, and a watch that has not delivered it within a
   * second is replaced. A change is thus enforced within `checkMs` whatever happens to the watch.
   */
  async watch(
    onChange: (snapshot: RegistrySnapshot) => void,
    logger?: Logger,
    onEnd?: (error: unknown) => void,
    checkMs = REGISTRY_CHECK_MS,
  ): Promise<() => Promise<void>> {
    const first = await this.current();
    const state = { seen: first.revision, watched: first.revision, stopped: false };
    onChange(first);
    const deliver = (snapshot: RegistrySnapshot) => {
      if (snapshot.revision <= state.seen) return;
      state.seen = snapshot.revision;
      onChange(snapshot);
    };
    let follower = await this.follow(state, deliver, logger, onEnd);
    let behindSince: number | undefined;
    let checking = false;
    const check = async () => {
      const latest = await this.current();
      deliver(latest);
      if (latest.revision <= state.watched) behindSince = undefined;
      else if (behindSince === undefined) behindSince = Date.now();
      else if (Date.now() - behindSince >= WATCH_BEHIND_MS) {
        logger?.warn(
          { revision: latest.revision, watched: state.watched },
          "the registry watch missed a revision: re-establishing it",
        );
        behindSince = undefined;
        const broken = follower;
        state.watched = latest.revision;
        follower = await this.follow(state, deliver, logger, onEnd);
        await broken.stop();
      }
    };
    const timer = setInterval(() => {
      if (checking || state.stopped) return;
      checking = true;
      check()
        .catch((error: unknown) => logger?.debug({ err: error }, "registry check failed"))
        .finally(() => (checking = false));
    }, checkMs);
    timer.unref();
    return async () => {
      state.stopped = true;
      clearInterval(timer);
      await follower.stop();
    };
  }

  /** One KV watch from after `state.watched`, delivering valid revisions through `deliver`. */
  private async follow(
    state: { watched: number; stopped: boolean },
    deliver: (snapshot: RegistrySnapshot) => void,
    logger: Logger | undefined,
    onEnd: ((error: unknown) => void) | undefined,
  ): Promise<{ stop(): Promise<void> }> {
    // Resume right after what we read, so a put between the read and the watch is not missed.
    const from = state.watched;
    const watcher = await this.kv.watch(
      from > 0 ? { key: KEY, resumeFromRevision: from + 1 } : { key: KEY },
    );
    let stopped = false;
    const done = (async () => {
      for await (const entry of watcher) {
        if (entry.revision > state.watched) state.watched = entry.revision;
        if (entry.operation !== "PUT") {
          deliver(new RegistrySnapshot(entry.revision, { policies: [] }));
          continue;
        }
        try {
          deliver(
            new RegistrySnapshot(
              entry.revision,
              parseRegistryDocument(entry.json(), `registry revision ${entry.revision}`),
            ),
          );
        } catch (error) {
          logger?.error(
            { err: error, revision: entry.revision },
            "ignoring invalid registry revision",
          );
        }
      }
    })().then(
      () => {
        if (!stopped && !state.stopped) onEnd?.(undefined);
      },
      (error: unknown) => {
        if (!stopped && !state.stopped) onEnd?.(error);
      },
    );
    return {
      async stop() {
        stopped = true;
        watcher.stop();
        await done;
      },
    };
  }
}
