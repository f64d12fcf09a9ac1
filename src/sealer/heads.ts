/**
 * Each session's chain head for the sealer, with memory bounded however many sessions there are:
 * the most recently used heads in memory, all of them in KV (`<ns>_seal_heads`, key =
 * `<agentToken>.<sessionToken>`), written after each batch is stored. A head missing from KV
 * after a crash can only be one of the last batch's, which the sealer re-reads on start.
 */
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { KV_ALLOW_DIRECT, KV_REQUEST_TIMEOUT_MS } from "../bus/bus.js";
import type { Subjects } from "../bus/subjects.js";

export interface SessionHead {
  hash: string;
  count: number;
}

export function headsBucketName(subjects: Subjects): string {
  return `${subjects.namespace}_seal_heads`;
}

/** The KV key of a session ("" — subjects of another shape — has a key of its own). */
const keyOf = (session: string) => (session === "" ? "_other" : session);

export class SessionHeads {
  private readonly recent = new Map<string, SessionHead>();

  private constructor(
    private readonly kv: KV,
    private readonly capacity: number,
  ) {}

  static async open(
    nc: NatsConnection,
    subjects: Subjects,
    capacity: number,
    replicas = 1,
  ): Promise<SessionHeads> {
    const kv = await new Kvm(jetstream(nc, { timeout: KV_REQUEST_TIMEOUT_MS })).create(
      headsBucketName(subjects),
      { history: 1, storage: "file", allow_direct: KV_ALLOW_DIRECT, replicas },
    );
    return new SessionHeads(kv, Math.max(1, capacity));
  }

  /** Sealed heads not yet stored in KV; retried at every persist, kept across forget(). */
  private readonly unpersisted = new Map<string, SessionHead>();

  get size(): number {
    return this.recent.size;
  }

  async get(session: string): Promise<SessionHead | undefined> {
    const cached = this.recent.get(session) ?? this.unpersisted.get(session);
    if (cached !== undefined) {
      this.remember(session, cached);
      return cached;
    }
    const entry = await this.kv.get(keyOf(session));
    if (entry === null || entry.operation !== "PUT") return undefined;
    const head = parseHead(entry.string());
    if (head !== undefined) this.remember(session, head);
    return head;
  }

  /** In memory only (a batch being built, or the last stored batch on start). */
  remember(session: string, head: SessionHead): void {
    this.recent.delete(session);
    this.recent.set(session, head);
    if (this.recent.size > this.capacity) {
      // Maps iterate in insertion order: the first key is the least recently used.
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
  }

  /**
   * Drop the cache, but not heads whose batch is sealed while their KV write failed (a NATS
   * restart between append and persist): KV is behind for those sessions, and continuing from it
   * would break their chains.
   */
  forget(): void {
    this.recent.clear();
  }

  /** Drop everything held in memory: another sealer may have sealed since (a lost lease). */
  forgetAll(): void {
    this.recent.clear();
    this.unpersisted.clear();
  }

  /** Store heads in KV (after their batch is in the seal stream), with any earlier failed writes. */
  async persist(heads: ReadonlyMap<string, SessionHead>): Promise<void> {
    for (const [session, head] of heads) this.unpersisted.set(session, head);
    await Promise.all(
      [...this.unpersisted].map(async ([session, head]) => {
        await this.kv.put(keyOf(session), JSON.stringify(head));
        if (this.unpersisted.get(session) === head) this.unpersisted.delete(session);
      }),
    );
  }
}

function parseHead(text: string): SessionHead | undefined {
  try {
    const v = JSON.parse(text) as Partial<SessionHead>;
    return typeof v.hash === "string" && /^[0-9a-f]{64}$/.test(v.hash) && Number.isInteger(v.count)
      ? { hash: v.hash, count: v.count! }
      : undefined;
  } catch {
    return undefined;
  }
}
