/**
 * The approvals bucket with its texts sealed at rest (docs/privacy.md, "Approvals"): what the
 * coordinator's approval service uses when the namespace encrypts. Entries are sealed under the
 * call's data subject's key before every write and opened after every read, so the service works
 * on plain entries and the bucket holds only ciphertext of the subject. Once the subject is
 * erased, an entry opens with "[erased]" in each sealed place and says so (`erased`): keys are
 * read from the bucket for every entry, never from the cache, so that holds at once.
 */
import type { DataKeyStore } from "../privacy/data-keys.js";
import { openSealed, sealPlaces } from "../privacy/record-cipher.js";
import { APPROVAL_SEALED_PLACES, type ApprovalEntry } from "./entry.js";
import type { ApprovalEntries, ApprovalStore, StoredEntry } from "./store.js";

export class SealedApprovalStore implements ApprovalEntries {
  constructor(
    private readonly plain: ApprovalStore,
    private readonly keys: DataKeyStore,
  ) {}

  async get(id: string): Promise<StoredEntry | undefined> {
    const stored = await this.plain.get(id);
    return stored === undefined ? undefined : this.opened(stored);
  }

  async create(entry: ApprovalEntry): Promise<StoredEntry> {
    const stored = await this.plain.create(await this.sealed(entry));
    return this.opened(stored);
  }

  async update(entry: ApprovalEntry, revision: number): Promise<number | undefined> {
    return this.plain.update(await this.sealed(entry), revision);
  }

  async list(): Promise<StoredEntry[]> {
    const opened: StoredEntry[] = [];
    for (const stored of await this.plain.list()) opened.push(await this.opened(stored));
    return opened;
  }

  /** The entry sealed under its subject's current key; one without a subject is kept as is. */
  private async sealed(entry: ApprovalEntry): Promise<ApprovalEntry> {
    const { encrypted: _stale, ...plain } = entry;
    if (plain.subject === undefined) return plain;
    const key = await this.keys.current(plain.subject, { agent: plain.agentId });
    return sealPlaces(plain, APPROVAL_SEALED_PLACES, plain.subject, key);
  }

  private async opened(stored: StoredEntry): Promise<StoredEntry> {
    const enc = stored.entry.encrypted;
    if (enc === undefined) return stored;
    const { record, failure } = openSealed(stored.entry, await this.keys.findStored(enc.subject));
    const { encrypted: _sealed, ...entry } = record;
    return { ...stored, entry, ...(failure === undefined ? {} : { erased: true }) };
  }
}
