/**
 * Sealing a record's personal fields with its subject's data key, and opening them: pure (the
 * keys come in). Sealing moves the values at the declared places (fields.ts) into ONE AES-256-GCM
 * ciphertext and leaves "[encrypted]" in each place, so the record keeps its shape and schema, the
 * chain and the signatures cover the ciphertext, and deleting the key erases every place at once
 * without touching a stored byte. The authenticated data binds the subject, the key generation and
 * the list of places: a ciphertext moved to another record, or a list edited, does not open.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  randomBytes,
  type KeyObject,
} from "node:crypto";
import type { EncryptedContent, LogRecord } from "../log/record.js";
import { checkSubjectId } from "./subject.js";
import { ENCRYPTED_FIELDS, pathsOf, segmentsOf } from "./fields.js";

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

const pointerOf = (segments: readonly string[]) =>
  segments.map((s) => `/${s.replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
const unpointer = (pointer: string) =>
  pointer
    .slice(1)
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));

function aad(subject: string, kid: string, paths: readonly string[]): Buffer {
  return Buffer.from(`hookbus-record-v1\0${subject}\0${kid}\0${paths.join("\0")}`, "utf8");
}

type Node = Record<string, unknown>;

/** A copy of `record` with each container on the way to `path` copied, and the leaf set. */
function setAt(root: Node, path: readonly string[], value: unknown): void {
  let node = root;
  for (const key of path.slice(0, -1)) {
    const child = node[key] as Node;
    const copy = (Array.isArray(child) ? [...child] : { ...child }) as Node;
    node[key] = copy;
    node = copy;
  }
  node[path.at(-1)!] = value;
}

function getAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) node = (node as Node | undefined)?.[key];
  return node;
}

/** The record with its personal fields sealed under `key`; a record with none is returned as it is. */
/** The table's patterns split once (this runs per record on the decision path). */
const PATTERNS = new Map(
  Object.entries(ENCRYPTED_FIELDS).map(([kind, list]) => [kind, list.map(segmentsOf)]),
);

/** Each data key imported once: createCipheriv on a KeyObject skips re-importing the bytes. */
const imported = new WeakMap<Buffer, KeyObject>();
function keyObject(key: DataKey): KeyObject {
  let object = imported.get(key.key);
  if (object === undefined) imported.set(key.key, (object = createSecretKey(key.key)));
  return object;
}

export function sealRecord<T extends LogRecord>(record: T, subjectHash: string, key: DataKey): T {
  const found = (PATTERNS.get(record.kind) ?? []).flatMap((p) => pathsOf(record, p));
  if (found.length === 0) return record;
  const paths = found.map(pointerOf);
  const values = found.map((path) => getAt(record, path));
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyObject(key), iv);
  cipher.setAAD(aad(subjectHash, key.kid, paths));
  const ct = Buffer.concat([cipher.update(JSON.stringify(values), "utf8"), cipher.final()]);
  const sealed = { ...record } as unknown as Node;
  for (const path of found) setAt(sealed, path, ENCRYPTED_MARK);
  const encrypted: EncryptedContent = {
    alg: "A256GCM",
    subject: subjectHash,
    kid: key.kid,
    paths,
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ct: ct.toString("base64"),
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
  const enc = record.encrypted;
  if (enc === undefined) return { record };
  const values = key !== undefined && key.kid === enc.kid ? decrypt(enc, key) : undefined;
  const opened = { ...record } as unknown as Node;
  enc.paths.forEach((pointer, i) =>
    setAt(opened, unpointer(pointer), values === undefined ? ERASED_MARK : values[i]),
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
