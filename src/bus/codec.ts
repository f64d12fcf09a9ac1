/**
 * How a JSON body travels: as is when small, gzipped above a threshold, and as a reference to
 * stored chunks when even gzipped it would not fit one message. The `Hookbus-Encoding` header
 * says which; a receiver in another language needs only gzip and the blob layout of
 * docs/protocol.md.
 */
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { headers as natsHeaders, type MsgHdrs } from "@nats-io/transport-node";
import { z } from "zod";
import { HookbusError } from "../foundation/errors.js";
import { injectTraceContext, tracePropagates } from "../observability/trace.js";
import {
  DEFAULT_LIMITS,
  jsonDepthExceeds,
  jsonMembers,
  limitExceeded,
  type Limits,
} from "../foundation/limits.js";
import { NON_FINITE_NUMBER, parsedMembers } from "../foundation/json-keys.js";
import { SHARED_BLOB_OWNER, type BlobRef, type BlobStore } from "./blobs.js";
import { Header } from "./headers.js";
import { inflateBounded as inflate } from "./inflate.js";
import { encodeToken } from "./tokens.js";
import type { MaybePromise } from "../foundation/hot-path.js";

const gzipAsync = promisify(gzip);

/** The limits the codec enforces on what it decodes (docs/limits.md). */
export type BodyLimits = Pick<
  Limits,
  "maxEncodedBytes" | "maxInflatedBytes" | "maxDepth" | "maxBlobChunks"
>;

/**
 * A log record holds a call's input and every verdict, a few levels deeper and a few times
 * larger than any one message it was made from: records are read with this much more room.
 */
export const RECORD_DEPTH_ALLOWANCE = 8;
export const RECORD_SIZE_FACTOR = 4;

export interface DecodeOptions {
  /**
   * The agent token the body was received from: a blob reference must name that agent's blobs
   * (an agent cannot make a coordinator read another agent's blob into its own call).
   */
  owner?: string;
  /**
   * The body is a log record: allow RECORD_DEPTH_ALLOWANCE more levels, RECORD_SIZE_FACTOR × the
   * sizes, and skip the key-twice check (parseJson says why).
   */
  record?: boolean;
  /** Epoch ms: a blob-backed body must be read by then (HOOKBUS_CALL_TIMEOUT otherwise). */
  deadline?: number;
  /**
   * The namespace encrypts: a blob reference without a key (a body an older agent stored in
   * clear, out of reach of any erasure) is refused with HOOKBUS_BLOB_UNSEALED before it is read.
   */
  sealedBlobsOnly?: boolean;
}

export interface EncodeOptions {
  /**
   * The agent whose blobs a large body is stored under. Default: the body's `context.agentId`
   * when it has one (calls, policy requests, records), else the shared owner.
   */
  agentId?: string;
  /** Epoch ms: a body large enough for the blob store must be stored by then. */
  deadline?: number;
}

export type BodyEncoding = "json" | "gzip" | "blob";

export interface BodyCodecOptions {
  /** Gzip bodies larger than this many bytes. */
  compressAbove?: number;
  /** Bodies (after gzip) larger than this go to the blob store. Keep below the server's max_payload. */
  maxInlineBytes?: number;
  /** Limits on decoded bodies; default DEFAULT_LIMITS. */
  limits?: Partial<BodyLimits>;
}

export const DEFAULT_COMPRESS_ABOVE = 64 * 1024;
/** 1 MiB default max_payload minus room for headers. */
export const DEFAULT_MAX_INLINE_BYTES = 1024 * 1024 - 64 * 1024;

const BlobReference = z.strictObject({
  blob: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.int().min(0),
  chunks: z.int().min(1),
  gzip: z.boolean(),
  owner: z
    .string()
    .regex(/^[A-Za-z0-9_=-]{1,1024}$/)
    .describe("The agent token the chunks are stored under: <ns>.blob.<owner>.<blob>.<index>."),
  key: z
    .string()
    .regex(/^[A-Za-z0-9+/]{43}=$/)
    .optional()
    .describe(
      "The body's own ChaCha20-Poly1305 key (base64): the chunks are sealed (docs/privacy.md).",
    ),
  iv: z
    .string()
    .regex(/^[A-Za-z0-9+/]{16}$/)
    .optional(),
});

export interface EncodedBody {
  data: Uint8Array;
  encoding: BodyEncoding;
}

export class BodyCodec {
  private readonly compressAbove: number;
  private readonly maxInlineBytes: number;
  readonly limits: BodyLimits;

  constructor(
    private readonly blobs: BlobStore | undefined,
    options: BodyCodecOptions = {},
  ) {
    this.compressAbove = options.compressAbove ?? DEFAULT_COMPRESS_ABOVE;
    this.maxInlineBytes = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
    this.limits = {
      maxEncodedBytes: options.limits?.maxEncodedBytes ?? DEFAULT_LIMITS.maxEncodedBytes,
      maxInflatedBytes: options.limits?.maxInflatedBytes ?? DEFAULT_LIMITS.maxInflatedBytes,
      maxDepth: options.limits?.maxDepth ?? DEFAULT_LIMITS.maxDepth,
      maxBlobChunks: options.limits?.maxBlobChunks ?? DEFAULT_LIMITS.maxBlobChunks,
    };
  }

  async encode(value: unknown, options: EncodeOptions = {}): Promise<EncodedBody> {
    return this.encodeNow(value, options);
  }

  /**
   * As `encode`, without a promise when the body travels inline as plain JSON (the common case):
   * a promise only when it must be gzipped or stored (hot path rule 1: foundation/hot-path.ts).
   */
  encodeNow(value: unknown, options: EncodeOptions = {}): MaybePromise<EncodedBody> {
    const json = Buffer.from(JSON.stringify(value), "utf8");
    if (json.length <= this.compressAbove) return { data: json, encoding: "json" };
    return this.encodeLarge(json, value, options);
  }

  private async encodeLarge(
    json: Buffer,
    value: unknown,
    options: EncodeOptions,
  ): Promise<EncodedBody> {
    const zipped = await gzipAsync(json);
    if (zipped.length <= this.maxInlineBytes) return { data: zipped, encoding: "gzip" };
    if (this.blobs === undefined) {
      throw new HookbusError(
        "HOOKBUS_PAYLOAD_TOO_LARGE",
        `body of ${json.length} bytes needs a blob store`,
        {},
      );
    }
    const ref: BlobRef = await this.blobs.put(
      zipped,
      blobOwner(value, options.agentId),
      options.deadline === undefined ? {} : { deadline: options.deadline },
    );
    const body = { ...ref, gzip: true } satisfies z.infer<typeof BlobReference>;
    return { data: Buffer.from(JSON.stringify(body), "utf8"), encoding: "blob" };
  }

  async decode(
    data: Uint8Array,
    encoding: string | undefined,
    options: DecodeOptions = {},
  ): Promise<unknown> {
    const record = options.record === true;
    const limits = effectiveLimits(this.limits, record);
    try {
      checkEncodedSize(data, limits);
      switch (encoding ?? "json") {
        case "json":
          return parseInline(data, limits, record);
        case "gzip":
          return parseJson(await inflate(data, limits.maxInflatedBytes), limits.maxDepth, record);
        case "blob": {
          if (this.blobs === undefined)
            throw new Error("no blob store to resolve a blob reference");
          const ref = BlobReference.parse(parseJson(data, 2));
          checkBlobReference(ref, limits, options);
          const stored = await this.blobs.get(
            ref,
            options.deadline === undefined ? {} : { deadline: options.deadline },
          );
          return parseJson(
            ref.gzip ? await inflate(stored, limits.maxInflatedBytes) : stored,
            limits.maxDepth,
            record,
          );
        }
        default:
          throw new Error(`unknown body encoding ${JSON.stringify(encoding)}`);
      }
    } catch (error) {
      throw asBadMessage(error, encoding ?? "json");
    }
  }

  /** Decode a message whose encoding is given in its headers. */
  decodeMessage(
    msg: { data: Uint8Array; headers?: MsgHdrs | undefined },
    options: DecodeOptions = {},
  ): Promise<unknown> {
    const encoding = msg.headers?.get(Header.Encoding);
    return this.decode(msg.data, encoding === "" ? undefined : encoding, options);
  }

  /**
   * As `decodeMessage`, without a promise for a plain JSON body (the common case): the value, or
   * a promise only when the body must be inflated or fetched. Same limits, same errors (thrown).
   * A decoded JSON value is never a promise, so `isPromise` tells the two apart (hot path rule 1:
   * foundation/hot-path.ts).
   */
  decodeMessageNow(
    msg: { data: Uint8Array; headers?: MsgHdrs | undefined },
    options: DecodeOptions = {},
  ): unknown {
    const header = msg.headers?.get(Header.Encoding);
    const encoding = header === "" ? undefined : header;
    if (encoding !== undefined && encoding !== "json")
      return this.decode(msg.data, encoding, options);
    const record = options.record === true;
    const limits = effectiveLimits(this.limits, record);
    try {
      return parseInline(msg.data, limits, record);
    } catch (error) {
      throw asBadMessage(error, "json");
    }
  }
}

function asBadMessage(error: unknown, encoding: string): HookbusError {
  if (error instanceof HookbusError) return error;
  return new HookbusError(
    "HOOKBUS_BAD_MESSAGE",
    `cannot decode ${encoding} body: ${String(error)}`,
    {},
    error,
  );
}

function checkEncodedSize(data: Uint8Array, limits: BodyLimits): void {
  if (data.length > limits.maxEncodedBytes) {
    throw limitExceeded(
      "maxEncodedBytes",
      `a body of ${data.length} bytes is over the limit of ${limits.maxEncodedBytes}`,
      { bytes: data.length, max: limits.maxEncodedBytes },
    );
  }
}

/** A plain JSON body: size and depth checked, then parsed. */
function parseInline(data: Uint8Array, limits: BodyLimits, record: boolean): unknown {
  checkEncodedSize(data, limits);
  return parseJson(data, limits.maxDepth, record);
}

function effectiveLimits(limits: BodyLimits, record: boolean): BodyLimits {
  if (!record) return limits;
  return {
    maxEncodedBytes: limits.maxEncodedBytes * RECORD_SIZE_FACTOR,
    maxInflatedBytes: limits.maxInflatedBytes * RECORD_SIZE_FACTOR,
    maxDepth: limits.maxDepth + RECORD_DEPTH_ALLOWANCE,
    maxBlobChunks: limits.maxBlobChunks * RECORD_SIZE_FACTOR,
  };
}

/** Refused before a single chunk is fetched: too many chunks, too large, or another agent's. */
function checkBlobReference(
  ref: z.infer<typeof BlobReference>,
  limits: BodyLimits,
  { owner, sealedBlobsOnly }: DecodeOptions,
): void {
  if (sealedBlobsOnly === true && ref.key === undefined) {
    throw new HookbusError(
      "HOOKBUS_BLOB_UNSEALED",
      `blob ${ref.blob} was stored in clear, and this namespace encrypts: upgrade the agent to a hookbus that seals blobs`,
      { blob: ref.blob, owner: ref.owner },
    );
  }
  if (ref.chunks > limits.maxBlobChunks) {
    throw limitExceeded(
      "maxBlobChunks",
      `a blob reference names ${ref.chunks} chunks; at most ${limits.maxBlobChunks} are allowed`,
      { chunks: ref.chunks, max: limits.maxBlobChunks },
    );
  }
  if (ref.size > limits.maxInflatedBytes) {
    throw limitExceeded(
      "maxInflatedBytes",
      `a blob of ${ref.size} bytes is over the limit of ${limits.maxInflatedBytes}`,
      { bytes: ref.size, max: limits.maxInflatedBytes },
    );
  }
  if (owner !== undefined && ref.owner !== owner) {
    throw new HookbusError(
      "HOOKBUS_IDENTITY_MISMATCH",
      `a body received from agent token ${owner} refers to a blob of ${ref.owner}`,
      { owner: ref.owner, expected: owner },
    );
  }
}

/**
 * As Buffer's `toString("utf8")` (invalid bytes become U+FFFD, a byte order mark is kept, so
 * JSON.parse refuses it as before) without a Buffer view made around the bytes per message.
 */
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Depth checked before JSON.parse, and (unless `anyKeys`) a key twice in one object or a number
 * that overflows a double refused after it (docs/protocol.md, "One key once" and "Strict JSON";
 * foundation/json-keys.ts says why and how). Every body hookbus
 * receives is held to it: calls and observations (their text may be passed on as it came),
 * verdicts (a reply that reads two ways is invalid, and its policy's failure mode decides), policy
 * requests and decisions (cheap, and one rule for the whole wire). Log records read with `record`
 * skip it: coordinators alone write the log, from JSON.stringify or from the bytes of a call this
 * check passed, and replay, audit and the indexer must read whatever the log holds.
 */
function parseJson(bytes: Uint8Array, maxDepth: number, anyKeys = false): unknown {
  const members = anyKeys
    ? jsonDepthExceeds(bytes, maxDepth)
      ? -1
      : 0
    : jsonMembers(bytes, maxDepth);
  if (members < 0) {
    throw limitExceeded("maxDepth", `a body nests deeper than the limit of ${maxDepth} levels`, {
      max: maxDepth,
    });
  }
  const value: unknown = JSON.parse(utf8.decode(bytes));
  if (anyKeys) return value;
  const parsed = parsedMembers(value);
  if (parsed === NON_FINITE_NUMBER) {
    throw new HookbusError(
      "HOOKBUS_BAD_MESSAGE",
      "a JSON body holds a number too large for a double (read as Infinity, written back as null)",
      { reason: "non-finite-number" },
    );
  }
  if (parsed !== members) {
    throw new HookbusError(
      "HOOKBUS_BAD_MESSAGE",
      "a JSON body has the same key twice in one object: its readers could disagree on its value",
      { reason: "duplicate-key" },
    );
  }
  return value;
}

/** The agent token a large body's blob is stored under (docs/protocol.md, "Blobs"). */
function blobOwner(value: unknown, agentId: string | undefined): string {
  if (agentId !== undefined && agentId !== "") return encodeToken(agentId);
  const context = (value as { context?: { agentId?: unknown } } | null)?.context;
  const fromContext = context?.agentId;
  return typeof fromContext === "string" && fromContext !== ""
    ? encodeToken(fromContext)
    : SHARED_BLOB_OWNER;
}

/** Headers for an encoded body (plus any others the caller sets, and the active trace context). */
export function bodyHeaders(encoded: EncodedBody, extra: Record<string, string> = {}): MsgHdrs {
  const h = natsHeaders();
  if (encoded.encoding !== "json") h.set(Header.Encoding, encoded.encoding);
  for (const [key, value] of Object.entries(extra)) h.set(key, value);
  return injectTraceContext(h);
}

/**
 * As bodyHeaders, but none at all when there is nothing to say (a plain JSON body, no extra
 * header, no trace propagator): the message then goes out without a header block.
 */
export function optionalBodyHeaders(
  encoded: EncodedBody,
  extra: Record<string, string> = {},
): MsgHdrs | undefined {
  if (encoded.encoding === "json" && Object.keys(extra).length === 0 && !tracePropagates())
    return undefined;
  return bodyHeaders(encoded, extra);
}
