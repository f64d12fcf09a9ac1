/**
 * Sealing a record's personal fields with its subject's data key, and opening them: pure (the
 * keys come in). Sealing moves the values at the declared places (fields.ts) into ONE AES-256-GCM
 * ciphertext and leaves "[encrypted]" in each place, so the record keeps its shape and schema, the
 * chain and the signatures cover the ciphertext, and deleting the key erases every place at once
 * without touching a stored byte. The authenticated data binds the subject, the key generation and
 * the list of places: a ciphertext moved to another record, or a list edited, does not open.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { EncryptedContent, LogRecord } from "../log/record.js";
import { checkSubjectId } from "./subject.js";
import { ENCRYPTED_FIELDS, placesOf, segmentsOf, type Place } from "./fields.js";

export const ENCRYPTED_MARK = "[encrypted]";
export const ERASED_MARK = "[erased]";

/** A data key of one subject: 32 bytes and its generation id. */
export interface DataKey {
  kid: string;
  key: Buffer;
}

/** The data subject of a record: the agent-named user, else the session. */
export function subjectOf(record: LogRecord): string {
  const named = record.context.subject;
  if (named !== undefined) return `subject:${checkSubjectId(named, "the context's subject")}`;
  return `session:${String(record.context.sessionKey)}`;
}

/** What the key store and the record know a subject by: never the id itself (it is personal). */
export function subjectDigest(subject: string): string {
  return createHash("sha256").update(subject, "utf8").digest("hex");
}

const unpointer = (pointer: string) =>
  pointer
    .slice(1)
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));

function aad(subject: string, kid: string, paths: readonly string[]): Buffer {
  return Buffer.from(`hookbus-record-v1\0${subject}\0${kid}\0${paths.join("\0")}`, "utf8");
}

type Node = Record<string, unknown>;

/**
 * Set the leaf at `path` in `root` (itself a copy), copying each container on the way so the
 * original record is never changed. `copies` holds the containers already copied for this
 * record, so places that share a parent (a decision's outcomes) copy it once, not once each.
 */
function setAt(
  root: Node,
  path: readonly string[],
  value: unknown,
  copies: Set<unknown> = new Set(),
): void {
  let node = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    let child = node[key] as Node;
    if (!copies.has(child)) {
      child = (Array.isArray(child) ? [...child] : { ...child }) as Node;
      copies.add(child);
      node[key] = child;
    }
    node = child;
  }
  node[path[path.length - 1]!] = value;
}

function getAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) node = (node as Node | undefined)?.[key];
  return node;
}

/** The table's patterns split once (this runs per record on the decision path). */
const PATTERNS = new Map(
  Object.entries(ENCRYPTED_FIELDS).map(([kind, list]) => [kind, list.map(segmentsOf)]),
);

/**
 * Nonces come from a pool of random bytes filled 4,096 at a time and never handed out twice: one
 * call into OpenSSL per 341 records instead of one per record. A 96-bit random nonce per message
 * is what GCM asks for; where the bytes were drawn at once does not make them less random.
 */
const IV_BYTES = 12;
const IV_POOL_BYTES = IV_BYTES * 341;
let ivPool = Buffer.alloc(0);
let ivNext = 0;
function nextIv(): Buffer {
  if (ivNext + IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_POOL_BYTES);
    ivNext = 0;
  }
  const iv = ivPool.subarray(ivNext, ivNext + IV_BYTES);
  ivNext += IV_BYTES;
  return iv;
}

/** The places of `record` its kind's table reaches, in table order. */
function placesIn(record: LogRecord): Place[] {
  const found: Place[] = [];
  for (const pattern of PATTERNS.get(record.kind) ?? []) placesOf(record, pattern, found);
  return found;
}

/**
 * The record with its personal fields sealed under `key`; a record with none is returned as it is.
 * ONE AES-256-GCM pass over ONE serialised array of every sealed value: the cost per record is a
 * cipher set-up and one JSON text, however many places the record has. The key's raw bytes are
 * given to OpenSSL directly (a KeyObject measured slower to set up for each record here).
 */
export function sealRecord<T extends LogRecord>(record: T, subjectHash: string, key: DataKey): T {
  return sealFound(record, placesIn(record), subjectHash, key);
}

/** Something sealed the way records are: its sealed values travel in `encrypted`. */
export interface Sealable {
  encrypted?: EncryptedContent | undefined;
}

/**
 * Any value (an approval entry) sealed like a record, at the places `patterns` (split JSON
 * pointers, `*` as in fields.ts) reach: the same cipher, the same authenticated data, so
 * `openSealed` opens it and an erased key erases it with the subject's records.
 */
export function sealPlaces<T extends object>(
  value: T,
  patterns: readonly (readonly string[])[],
  subjectHash: string,
  key: DataKey,
): T {
  const found: Place[] = [];
  for (const pattern of patterns) placesOf(value, pattern, found);
  return sealFound(value, found, subjectHash, key);
}

function sealFound<T extends object>(
  value: T,
  found: readonly Place[],
  subjectHash: string,
  key: DataKey,
): T {
  if (found.length === 0) return value;
  const paths = found.map((place) => place.pointer);
  const values = found.map((place) => getAt(value, place.segments));
  const iv = nextIv();
  const cipher = createCipheriv("aes-256-gcm", key.key, iv);
  cipher.setAAD(aad(subjectHash, key.kid, paths));
  const ct = cipher.update(JSON.stringify(values), "utf8");
  const rest = cipher.final(); // empty for GCM, kept for form
  const sealed = { ...value } as unknown as Node;
  const copies = new Set<unknown>();
  for (const place of found) setAt(sealed, place.segments, ENCRYPTED_MARK, copies);
  const encrypted: EncryptedContent = {
    alg: "A256GCM",
    subject: subjectHash,
    kid: key.kid,
    paths,
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ct: (rest.length === 0 ? ct : Buffer.concat([ct, rest])).toString("base64"),
  };
  sealed.encrypted = encrypted;
  return sealed as unknown as T;
}

/** Why a sealed record could not be opened. */
export type OpenFailure = "erased" | "corrupt";

export interface Opened<T> {
  record: T;
  /** Absent when the values are back; else every sealed place reads "[erased]". */
  failure?: OpenFailure;
}

/**
 * The record with its sealed values back when `key` is the one it was sealed with; otherwise
 * (the key erased, or another generation) every sealed place reads "[erased]". A ciphertext that
 * fails its tag with the right key is `corrupt`, shown erased too: nothing unauthenticated is
 * ever shown as the record's content.
 */
export function openRecord<T extends LogRecord>(record: T, key: DataKey | undefined): Opened<T> {
  return openSealed(record, key);
}

/** As openRecord, for any value `sealPlaces` sealed; the result keeps `encrypted`. */
export function openSealed<T extends Sealable>(record: T, key: DataKey | undefined): Opened<T> {
  const enc = record.encrypted;
  if (enc === undefined) return { record };
  const values = key !== undefined && key.kid === enc.kid ? decrypt(enc, key) : undefined;
  const opened = { ...record } as unknown as Node;
  const copies = new Set<unknown>();
  enc.paths.forEach((pointer, i) =>
    setAt(opened, unpointer(pointer), values === undefined ? ERASED_MARK : values[i], copies),
  );
  if (values !== undefined) return { record: opened as unknown as T };
  const failure: OpenFailure = key !== undefined && key.kid === enc.kid ? "corrupt" : "erased";
  return { record: opened as unknown as T, failure };
}

function decrypt(enc: EncryptedContent, key: DataKey): unknown[] | undefined {
  if (enc.iv === undefined || enc.tag === undefined || enc.ct === undefined) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key.key, Buffer.from(enc.iv, "base64"));
    decipher.setAAD(aad(enc.subject, enc.kid, enc.paths));
    decipher.setAuthTag(Buffer.from(enc.tag, "base64"));
    const text = Buffer.concat([
      decipher.update(Buffer.from(enc.ct, "base64")),
      decipher.final(),
    ]).toString("utf8");
    const values: unknown = JSON.parse(text);
    return Array.isArray(values) && values.length === enc.paths.length ? values : undefined;
  } catch {
    return undefined; // a wrong tag: shown erased, never as content
  }
}

/**
 * A record as the index keeps it after an erasure (its ciphertext scrubbed): each sealed place
 * reads "[erased]". Needs no key; other records are returned as they are.
 */
export function showScrubbed<T>(record: T): T {
  const enc = (record as { encrypted?: EncryptedContent } | null)?.encrypted;
  if (enc === undefined || enc.ct !== undefined) return record;
  return openRecord(record as LogRecord, undefined).record as T;
}

/** Whether `record` is sealed and its ciphertext was scrubbed away (an erased index copy). */
export function isScrubbed(record: unknown): boolean {
  const enc = (record as { encrypted?: EncryptedContent } | null)?.encrypted;
  return enc !== undefined && enc.ct === undefined;
}

/**
 * The log's record as an erasure leaves the index's copy of it (what src/audit/pg/scrub.ts does
 * to a row, then `showScrubbed`): no nonce, tag or ciphertext, "[erased]" in each sealed place.
 * So a reader can check an erased index copy against the log: equal means only the ciphertext
 * went, every clear field is the log's.
 */
export function scrubbedCopy<T extends LogRecord>(record: T): T {
  const enc = record.encrypted;
  if (enc === undefined) return record;
  const { iv: _iv, tag: _tag, ct: _ct, ...kept } = enc;
  return showScrubbed({ ...record, encrypted: kept });
}
