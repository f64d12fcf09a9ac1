/**
 * How a JSON body travels: as is when small, gzipped above a threshold, and as a reference to
 * stored chunks when even gzipped it would not fit one message. The `Hookbus-Encoding` header
 * says which; a receiver in another language needs only gzip and the blob layout of
 * docs/protocol.md.
 */
import { promisify } from "node:util";
import { gunzip, gzip } from "node:zlib";
import { headers as natsHeaders, type MsgHdrs } from "@nats-io/transport-node";
import { z } from "zod";
import { HookbusError } from "../errors.js";
import { injectTraceContext } from "../observability/trace.js";
import type { BlobRef, BlobStore } from "./blobs.js";
import { Header } from "./headers.js";

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export type BodyEncoding = "json" | "gzip" | "blob";

export interface BodyCodecOptions {
  /** Gzip bodies larger than this many bytes. */
  compressAbove?: number;
  /** Bodies (after gzip) larger than this go to the blob store. Keep below the server's max_payload. */
  maxInlineBytes?: number;
}

export const DEFAULT_COMPRESS_ABOVE = 64 * 1024;
/** 1 MiB default max_payload minus room for headers. */
export const DEFAULT_MAX_INLINE_BYTES = 1024 * 1024 - 64 * 1024;

const BlobReference = z.strictObject({
  blob: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.int().min(0),
  chunks: z.int().min(1),
  gzip: z.boolean(),
});

export interface EncodedBody {
  data: Uint8Array;
  encoding: BodyEncoding;
}

export class BodyCodec {
  private readonly compressAbove: number;
  private readonly maxInlineBytes: number;

  constructor(
    private readonly blobs: BlobStore | undefined,
    options: BodyCodecOptions = {},
  ) {
    this.compressAbove = options.compressAbove ?? DEFAULT_COMPRESS_ABOVE;
    this.maxInlineBytes = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
  }

  async encode(value: unknown): Promise<EncodedBody> {
    const json = Buffer.from(JSON.stringify(value), "utf8");
    if (json.length <= this.compressAbove) return { data: json, encoding: "json" };
    const zipped = await gzipAsync(json);
    if (zipped.length <= this.maxInlineBytes) return { data: zipped, encoding: "gzip" };
    if (this.blobs === undefined) {
      throw new HookbusError(
        "HOOKBUS_PAYLOAD_TOO_LARGE",
        `body of ${json.length} bytes needs a blob store`,
        {},
      );
    }
    const ref: BlobRef = await this.blobs.put(zipped);
    const body = { ...ref, gzip: true } satisfies z.infer<typeof BlobReference>;
    return { data: Buffer.from(JSON.stringify(body), "utf8"), encoding: "blob" };
  }

  async decode(data: Uint8Array, encoding: string | undefined): Promise<unknown> {
    try {
      switch (encoding ?? "json") {
        case "json":
          return parseJson(data);
        case "gzip":
          return parseJson(await gunzipAsync(data));
        case "blob": {
          if (this.blobs === undefined)
            throw new Error("no blob store to resolve a blob reference");
          const ref = BlobReference.parse(parseJson(data));
          const stored = await this.blobs.get(ref);
          return parseJson(ref.gzip ? await gunzipAsync(stored) : stored);
        }
        default:
          throw new Error(`unknown body encoding ${JSON.stringify(encoding)}`);
      }
    } catch (error) {
      if (error instanceof HookbusError) throw error;
      throw new HookbusError(
        "HOOKBUS_BAD_MESSAGE",
        `cannot decode ${encoding ?? "json"} body: ${String(error)}`,
        {},
        error,
      );
    }
  }

  /** Decode a message whose encoding is given in its headers. */
  decodeMessage(msg: { data: Uint8Array; headers?: MsgHdrs | undefined }): Promise<unknown> {
    const encoding = msg.headers?.get(Header.Encoding);
    return this.decode(msg.data, encoding === "" ? undefined : encoding);
  }
}

function parseJson(bytes: Uint8Array): unknown {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
}

/** Headers for an encoded body (plus any others the caller sets, and the active trace context). */
export function bodyHeaders(encoded: EncodedBody, extra: Record<string, string> = {}): MsgHdrs {
  const h = natsHeaders();
  if (encoded.encoding !== "json") h.set(Header.Encoding, encoded.encoding);
  for (const [key, value] of Object.entries(extra)) h.set(key, value);
  return injectTraceContext(h);
}
