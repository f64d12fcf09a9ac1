/**
 * Bodies larger than one NATS message (the server's `max_payload`, 1 MiB by default) are stored
 * as content-addressed chunks in a JetStream stream and sent as a small reference. Chunks live on
 * `<ns>.blob.<owner>.<sha256>.<index>`, where the owner is the agent token of the call the body
 * belongs to: a reader fetches each chunk with a direct "last message for subject" get (no
 * consumer), so NATS permissions on `$JS.API.DIRECT.GET.<NS>_BLOBS.<ns>.blob.<agent>.>` can
 * restrict an agent to its own blobs. A second writer of the same content stores nothing new.
 * Works on nats-server 2.9.
 */
import { createHash } from "node:crypto";
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
  blob: string;
  size: number;
  chunks: number;
  /** The agent token the chunks are stored under (or SHARED_BLOB_OWNER). */
  owner: string;
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
    const blob = createHash("sha256").update(bytes).digest("hex");
    const chunks = Math.max(1, Math.ceil(bytes.length / this.chunkBytes));
    const ref = { blob, size: bytes.length, chunks, owner };
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
    if (await within(this.has(ref), "the existence check")) return ref;
    for (let index = 0; index < chunks; index++) {
      const chunk = bytes.subarray(index * this.chunkBytes, (index + 1) * this.chunkBytes);
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
    return bytes;
  }

  private async has(ref: BlobRef): Promise<boolean> {
    // Handled: a failed check (an agent may not read through the stream API) means "store it";
    // storing again is idempotent (each chunk's message id), and a real failure shows there.
    const last = await this.chunk(this.chunkSubject(ref, ref.chunks - 1)).catch(() => null);
    return last !== null;
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
