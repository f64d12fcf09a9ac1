/**
 * Bodies larger than one NATS message (the server's `max_payload`, 1 MiB by default) are stored
 * as content-addressed chunks in a JetStream stream and sent as a small reference. Chunks live on
 * `<ns>.blob.<owner>.<sha256>.<index>`, where the owner is the agent token of the call the body
 * belongs to: a reader fetches each chunk with a direct "last message for subject" get (no
 * consumer), so NATS permissions on `$JS.API.DIRECT.GET.<NS>_BLOBS.<ns>.blob.<agent>.>` can
 * restrict an agent to its own blobs. Works on nats-server 2.9.
 *
 * Every body is sealed before it is stored (docs/privacy.md, "Blobs"): ChaCha20-Poly1305 (IETF)
 * under a key made for that one body, which travels only inside the reference. (ChaCha20, not
 * AES-GCM: libsodium, which the Python worker reads blobs with, offers AES-GCM only on CPUs with
 * AES instructions.) A reference sent over core
 * NATS (a call, a policy request, a verdict, a reply) is never stored, so once it is answered no
 * stored byte opens its chunks; a reference kept in the log (a large record) opens them, and the
 * record inside was sealed under its subject's key before it was stored. The address is the
 * sha256 of the stored (sealed) bytes, so a chunk's subject says nothing about its content.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { TimeoutError } from "@nats-io/transport-node";
import { beforeDeadline } from "../foundation/deadline.js";
import { HookbusError } from "../foundation/errors.js";
import type { Subjects } from "./subjects.js";

/** 512 KiB leaves ample room under the default 1 MiB max_payload for headers and framing. */
export const DEFAULT_CHUNK_BYTES = 512 * 1024;

/**
 * The owner token of bodies that belong to no agent (e.g. a worker's large verdict). `=` followed
 * by lowercase letters is never produced by encodeToken, so no agent id can claim it.
 */
export const SHARED_BLOB_OWNER = "=shared";

export interface BlobDeadlineOptions {
  /**
   * Epoch ms by which the whole body must be read or stored (the caller's deadline): each
   * chunk's read or write is cut there, and one that does not finish fails with
   * HOOKBUS_CALL_TIMEOUT. Without it, each chunk waits up to the JetStream API timeout.
   */
  deadline?: number;
}

export interface BlobRef {
  /** sha256 of the stored bytes (the sealed ones when `key` is given). */
  blob: string;
  /** Stored bytes: the sealed body and its 16-byte tag when `key` is given. */
  size: number;
  chunks: number;
  /** The agent token the chunks are stored under (or SHARED_BLOB_OWNER). */
  owner: string;
  /** The body's own ChaCha20-Poly1305 key (base64 of 32 bytes): absent on a blob stored in clear. */
  key?: string;
  /** Its nonce (base64 of 12 bytes). */
  iv?: string;
}

const BLOB_KEY_BYTES = 32;
const BLOB_IV_BYTES = 12;
const BLOB_TAG_BYTES = 16;
const BLOB_CIPHER = "chacha20-poly1305";

/** The body sealed under a key of its own: the stored bytes (tag last) and what opens them. */
function sealBlob(body: Uint8Array): { sealed: Buffer; key: string; iv: string } {
  const key = randomBytes(BLOB_KEY_BYTES);
  const iv = randomBytes(BLOB_IV_BYTES);
  const cipher = createCipheriv(BLOB_CIPHER, key, iv, { authTagLength: BLOB_TAG_BYTES });
  const sealed = Buffer.concat([cipher.update(body), cipher.final(), cipher.getAuthTag()]);
  return { sealed, key: key.toString("base64"), iv: iv.toString("base64") };
}

/** The body back from its stored bytes; HOOKBUS_BLOB_MISSING when they do not authenticate. */
function openBlob(ref: BlobRef, stored: Buffer): Buffer {
  const key = Buffer.from(ref.key ?? "", "base64");
  const iv = Buffer.from(ref.iv ?? "", "base64");
  try {
    if (key.length !== BLOB_KEY_BYTES || iv.length !== BLOB_IV_BYTES) throw new Error("bad key");
    const decipher = createDecipheriv(BLOB_CIPHER, key, iv, { authTagLength: BLOB_TAG_BYTES });
    decipher.setAuthTag(stored.subarray(stored.length - BLOB_TAG_BYTES));
    return Buffer.concat([
      decipher.update(stored.subarray(0, stored.length - BLOB_TAG_BYTES)),
      decipher.final(),
    ]);
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_BLOB_MISSING",
      `blob ${ref.blob} does not open with the key its reference carries`,
      { blob: ref.blob },
      error,
    );
  }
}

export class BlobStore {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly subjects: Subjects,
    private readonly chunkBytes: number = DEFAULT_CHUNK_BYTES,
  ) {}

  async put(
    bytes: Uint8Array,
    owner: string = SHARED_BLOB_OWNER,
    options: BlobDeadlineOptions = {},
  ): Promise<BlobRef> {
    const { sealed, key, iv } = sealBlob(bytes);
    const blob = createHash("sha256").update(sealed).digest("hex");
    const chunks = Math.max(1, Math.ceil(sealed.length / this.chunkBytes));
    const ref: BlobRef = { blob, size: sealed.length, chunks, owner, key, iv };
    const within = <T>(work: Promise<T>, what: string): Promise<T> =>
      options.deadline === undefined
        ? work
        : beforeDeadline(
            work,
            options.deadline,
            "HOOKBUS_CALL_TIMEOUT",
            () => `blob ${blob}: ${what} did not finish before the caller's deadline`,
            { blob, chunks },
          );
    // No existence check: a body sealed under a fresh key is never stored twice.
    for (let index = 0; index < chunks; index++) {
      const chunk = sealed.subarray(index * this.chunkBytes, (index + 1) * this.chunkBytes);
      await within(
        this.js.publish(this.chunkSubject(ref, index), chunk, {
          msgID: `${owner}.${blob}.${index}`,
        }),
        `storing chunk ${index + 1} of ${chunks}`,
      );
    }
    return ref;
  }

  async get(ref: BlobRef, options: BlobDeadlineOptions = {}): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for (let index = 0; index < ref.chunks; index++) {
      const read = this.chunk(this.chunkSubject(ref, index));
      const msg =
        options.deadline === undefined
          ? await read
          : await beforeDeadline(
              read,
              options.deadline,
              "HOOKBUS_CALL_TIMEOUT",
              () =>
                `blob ${ref.blob}: chunk ${index + 1} of ${ref.chunks} was not read before the caller's deadline`,
              { blob: ref.blob, chunk: index, chunks: ref.chunks },
            );
      if (msg === null) {
        throw new HookbusError(
          "HOOKBUS_BLOB_MISSING",
          `blob ${ref.blob} chunk ${index} is missing`,
          { blob: ref.blob },
        );
      }
      parts.push(msg.data);
    }
    const bytes = Buffer.concat(parts);
    const digest = createHash("sha256").update(bytes).digest("hex");
    if (bytes.length !== ref.size || digest !== ref.blob) {
      throw new HookbusError(
        "HOOKBUS_BLOB_MISSING",
        `blob ${ref.blob} is corrupt (got ${bytes.length} bytes, sha256 ${digest})`,
        {
          blob: ref.blob,
        },
      );
    }
    return ref.key === undefined ? bytes : openBlob(ref, bytes);
  }

  /**
   * A direct get by subject (`$JS.API.DIRECT.GET.<NS>_BLOBS.<subject>`), so NATS permissions can
   * confine a reader to its own agent's blobs. nats-server 2.9 occasionally leaves a direct get
   * unanswered under bursts: a timeout is retried once through the stream API (which needs the
   * broader `$JS.API.STREAM.MSG.GET` permission that coordinators have).
   */
  private async chunk(subject: string): Promise<{ data: Uint8Array } | null> {
    try {
      return await this.jsm.direct.getMessage(this.subjects.blobStream, { last_by_subj: subject });
    } catch (error) {
      // nats.js rejects an unanswered request with its TimeoutError (no other error is retried).
      if (!(error instanceof TimeoutError)) throw error;
      return this.jsm.streams.getMessage(this.subjects.blobStream, { last_by_subj: subject });
    }
  }

  private chunkSubject(ref: BlobRef, index: number): string {
    return `${this.subjects.blob(ref.owner, ref.blob)}.${index}`;
  }
}
