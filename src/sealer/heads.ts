/**
 * Each session's chain head for the sealer, with memory bounded however many sessions there are:
 * the most recently used heads in memory, all of them in KV (`<ns>_seal_heads`, key =
 * `<agentToken>.<sessionToken>`), written after each batch is stored, then the index of that
 * batch under `_through` ("every head of batches up to here is in KV"). A sealer killed between
 * storing a batch and writing its heads leaves KV behind; whoever seals next first replays the
 * batches after `_through` from the seal stream into KV (repair.ts), so no session is continued
 * from a stale head.
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
/** Session keys always hold a dot (`<agentToken>.<sessionToken>`): this one cannot clash. */
export const THROUGH_KEY = "_through";

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

  get size(): number {
    return this.recent.size;
  }

  async get(session: string): Promise<SessionHead | undefined> {
    const cached = this.recent.get(session);
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

  /** In memory only (heads of a batch just stored). */
  remember(session: string, head: SessionHead): void {
    this.recent.delete(session);
    this.recent.set(session, head);
    if (this.recent.size > this.capacity) {
      // Maps iterate in insertion order: the first key is the least recently used.
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
  }

  /** Drop the cache: another sealer may have sealed since (a restart, a lost lease). */
  forget(): void {
    this.recent.clear();
  }

  /**
   * Store the heads of a stored batch in KV, then mark batch `index` as written through. A
   * failure leaves the mark behind, so the next start replays the batch (repair.ts).
   */
  async persist(heads: ReadonlyMap<string, SessionHead>, index: number): Promise<void> {
    await Promise.all(
      [...heads].map(([session, head]) => this.kv.put(keyOf(session), JSON.stringify(head))),
    );
    await this.kv.put(THROUGH_KEY, JSON.stringify({ index }));
  }

  /** The index of the last batch whose heads are all in KV (undefined: not known). */
  async through(): Promise<number | undefined> {
    const entry = await this.kv.get(THROUGH_KEY);
    if (entry === null || entry.operation !== "PUT") return undefined;
    try {
      const v = JSON.parse(entry.string()) as { index?: unknown };
      return Number.isInteger(v.index) ? (v.index as number) : undefined;
    } catch {
      return undefined;
    }
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
