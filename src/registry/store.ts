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
import { defaultReplicas } from "../bus/streams.js";
import type { Subjects } from "../bus/subjects.js";
import { sameDocument } from "./diff.js";
import { parseRegistryDocument } from "./document.js";
import { RegistrySnapshot } from "./snapshot.js";

const KEY = "policies";

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
    const current = await this.current().catch(() => undefined);
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
   * Keep `onChange` fed with the current snapshot; it is called once with the current revision
   * before this resolves. A revision that fails validation (written by hand, bypassing `apply`)
   * is logged and skipped: the last good policy set stays in force rather than dropping every
   * policy. `onEnd` is called if the watch ends by itself (an error, the bucket deleted) rather
   * than by the returned stop function: the caller decides whether to start another.
   */
  async watch(
    onChange: (snapshot: RegistrySnapshot) => void,
    logger?: Logger,
    onEnd?: (error: unknown) => void,
  ): Promise<() => Promise<void>> {
    const first = await this.current();
    let seen = first.revision;
    onChange(first);
    // Resume right after what we read, so a put between the read and the watch is not missed.
    const watcher = await this.kv.watch(
      seen > 0 ? { key: KEY, resumeFromRevision: seen + 1 } : { key: KEY },
    );
    let stopped = false;
    const done = (async () => {
      for await (const entry of watcher) {
        if (entry.revision <= seen) continue;
        seen = entry.revision;
        if (entry.operation !== "PUT") {
          onChange(new RegistrySnapshot(entry.revision, { policies: [] }));
          continue;
        }
        try {
          onChange(
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
        if (!stopped) onEnd?.(undefined);
      },
      (error: unknown) => {
        if (!stopped) onEnd?.(error);
      },
    );
    return async () => {
      stopped = true;
      watcher.stop();
      await done;
    };
  }
}
