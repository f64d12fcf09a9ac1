/**
 * The approvals bucket: one KV entry per request, keyed by its id, written only with
 * compare-and-set so that two coordinators (or an answer and a timeout) can never both settle it.
 */
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { KV_ALLOW_DIRECT, KV_REQUEST_TIMEOUT_MS } from "../bus/bus.js";
import { defaultReplicas } from "../bus/streams.js";
import type { Subjects } from "../bus/subjects.js";
import { HookbusError } from "../foundation/errors.js";
import { ApprovalEntry } from "./entry.js";

/** Settled requests stay readable this long (the log keeps their records for good). */
export const APPROVALS_TTL_MS = 7 * 24 * 3600 * 1000;
/** Most entries `list()` reads: a deployment past this many open requests has another problem. */
export const MAX_LISTED_APPROVALS = 10_000;

export interface StoredEntry {
  entry: ApprovalEntry;
  revision: number;
  /** Its texts were sealed under a key since erased: they read "[erased]". */
  erased?: boolean;
}

/** What the approval service reads and writes entries through: the bucket, sealed or not. */
export interface ApprovalEntries {
  get(id: string): Promise<StoredEntry | undefined>;
  create(entry: ApprovalEntry): Promise<StoredEntry>;
  update(entry: ApprovalEntry, revision: number): Promise<number | undefined>;
  list(): Promise<StoredEntry[]>;
}

function isConflict(error: unknown): boolean {
  const text = String((error as { message?: unknown })?.message ?? error);
  return /wrong last sequence|key exists|10071/i.test(text);
}

export class ApprovalStore implements ApprovalEntries {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, subjects: Subjects): Promise<ApprovalStore> {
    const kv = await new Kvm(jetstream(nc, { timeout: KV_REQUEST_TIMEOUT_MS })).create(
      subjects.approvalsBucket,
      {
        history: 1,
        storage: "file",
        ttl: APPROVALS_TTL_MS,
        allow_direct: KV_ALLOW_DIRECT,
        replicas: defaultReplicas(),
      },
    );
    return new ApprovalStore(kv);
  }

  async get(id: string): Promise<StoredEntry | undefined> {
    const found = await this.kv.get(id);
    if (found === null || found.operation !== "PUT") return undefined;
    let json: unknown;
    try {
      json = found.json();
    } catch {
      json = undefined; // not JSON: malformed, as below
    }
    const parsed = ApprovalEntry.safeParse(json);
    if (!parsed.success)
      throw new HookbusError(
        "HOOKBUS_BAD_RECORD",
        `approval ${id}: the stored entry is malformed`,
        {
          id,
        },
      );
    return { entry: parsed.data, revision: found.revision };
  }

  /** Store a new request; an existing one (a re-sent call) is kept and returned. */
  async create(entry: ApprovalEntry): Promise<StoredEntry> {
    try {
      const revision = await this.kv.create(entry.id, JSON.stringify(entry));
      return { entry, revision };
    } catch (error) {
      if (!isConflict(error)) throw error;
      const existing = await this.get(entry.id);
      if (existing === undefined) throw error;
      return existing;
    }
  }

  /** Write `entry` if the stored revision is still `revision`; undefined when someone was first. */
  async update(entry: ApprovalEntry, revision: number): Promise<number | undefined> {
    try {
      return await this.kv.update(entry.id, JSON.stringify(entry), revision);
    } catch (error) {
      if (isConflict(error)) return undefined;
      throw error;
    }
  }

  /** Every entry, pending first then by request time; at most MAX_LISTED_APPROVALS. */
  async list(): Promise<StoredEntry[]> {
    const keys: string[] = [];
    for await (const key of await this.kv.keys()) {
      keys.push(key);
      if (keys.length >= MAX_LISTED_APPROVALS) break;
    }
    const entries: StoredEntry[] = [];
    for (const key of keys) {
      // A malformed entry (written by hand) is left out of the list; a failed read is thrown.
      const stored = await this.get(key).catch((error: unknown) => {
        if (error instanceof HookbusError && error.code === "HOOKBUS_BAD_RECORD") return undefined;
        throw error;
      });
      if (stored !== undefined) entries.push(stored);
    }
    return entries.sort(
      (a, b) =>
        Number(a.entry.settlement !== undefined) - Number(b.entry.settlement !== undefined) ||
        a.entry.requestedAt.localeCompare(b.entry.requestedAt),
    );
  }
}
