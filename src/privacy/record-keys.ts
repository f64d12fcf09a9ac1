/**
 * Records and their keys: what the log writer calls to seal a record before it is stored, and
 * what every reader (audit query, the UI, replay) calls to open one. The only place that joins
 * the store and the pure cipher.
 */
import type { LogRecord } from "../log/record.js";
import type { DataKeyStore } from "./data-keys.js";
import { openRecord, sealRecord, subjectDigest, subjectOf, type Opened } from "./record-cipher.js";

/** What opens a sealed record (a RecordKeys); readers take this, not the store. */
export interface RecordOpener {
  open<T extends LogRecord>(record: T): Promise<Opened<T>>;
}

export class RecordKeys implements RecordOpener {
  constructor(readonly store: DataKeyStore) {}

  /** The record sealed under its subject's current key (made on first use). */
  async seal<T extends LogRecord>(record: T): Promise<T> {
    const named = subjectOf(record);
    const subject = subjectDigest(named);
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
