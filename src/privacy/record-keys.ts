/**
 * Records and their keys: what the log writer calls to seal a record before it is stored, and
 * what every reader (audit query, the UI, replay) calls to open one. The only place that joins
 * the store and the pure cipher.
 */
import type { LogRecord } from "../log/record.js";
import type { DataKeyStore } from "./data-keys.js";
import { openRecord, sealRecord, subjectDigest, subjectOf, type Opened } from "./record-cipher.js";
import type { MaybePromise } from "../foundation/hot-path.js";

/** What opens a sealed record (a RecordKeys); readers take this, not the store. */
export interface RecordOpener {
  open<T extends LogRecord>(record: T): Promise<Opened<T>>;
}

/** Subject digests remembered (a sha256 per record is measurable); cleared when this many. */
const MAX_DIGESTS = 10_000;

export class RecordKeys implements RecordOpener {
  private readonly digests = new Map<string, string>();

  constructor(readonly store: DataKeyStore) {}

  /** The record sealed under its subject's current key (made on first use). */
  async seal<T extends LogRecord>(record: T): Promise<T> {
    return this.sealNow(record);
  }

  /**
   * As `seal`, without a promise when the subject's key is in memory (nearly every record): the
   * decision path seals each record, and an await on a value already there is pure cost.
   */
  sealNow<T extends LogRecord>(record: T): MaybePromise<T> {
    const named = subjectOf(record);
    const subject = this.digestOf(named);
    const key = this.store.cachedKey(subject);
    if (key !== undefined) return sealRecord(record, subject, key);
    return this.sealWithStoredKey(record, named, subject);
  }

  private digestOf(named: string): string {
    let digest = this.digests.get(named);
    if (digest === undefined) {
      if (this.digests.size >= MAX_DIGESTS) this.digests.clear();
      this.digests.set(named, (digest = subjectDigest(named)));
    }
    return digest;
  }

  private async sealWithStoredKey<T extends LogRecord>(
    record: T,
    named: string,
    subject: string,
  ): Promise<T> {
    const agent = record.context.agentId;
    const origin = {
      ...(typeof agent === "string" ? { agent } : {}),
      target: named.startsWith("subject:") ? ("subject" as const) : ("session" as const),
    };
    return sealRecord(record, subject, await this.store.current(subject, origin));
  }

  /** The record opened, or with "[erased]" in each sealed place when its key is gone. */
  async open<T extends LogRecord>(record: T): Promise<Opened<T>> {
    const enc = record.encrypted;
    if (enc === undefined) return { record };
    return openRecord(record, await this.store.find(enc.subject));
  }
}
