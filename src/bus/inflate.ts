/**
 * Gunzip whose memory is bounded by what the body declares, not by what a hostile body expands
 * to. A gzip member ends with ISIZE, its inflated size (mod 2^32): a body declaring more than the
 * limit is refused before a byte is inflated, and one that inflates past its declaration (a lie,
 * or more than one member) is stopped there. The output is one buffer of the declared size
 * instead of hundreds of 16 KiB chunks joined at the end: the fuzz suite's gzip bombs left the
 * allocator's heap fragmented at several hundred MiB of RSS after every byte was freed.
 * docs/limits.md, "Inflated size".
 */
import { promisify } from "node:util";
import { gunzip, type ZlibOptions } from "node:zlib";
import { limitExceeded } from "../foundation/limits.js";

const gunzipAsync = promisify<Uint8Array, ZlibOptions, Buffer>(gunzip);

/** A gzip header (10 bytes) and trailer (CRC32 and ISIZE, 8 bytes). */
const MIN_GZIP_BYTES = 18;

/** The ISIZE a gzip body declares, or undefined when it is not gzip at all (short, no magic). */
export function declaredInflatedSize(data: Uint8Array): number | undefined {
  if (data.length < MIN_GZIP_BYTES || data[0] !== 0x1f || data[1] !== 0x8b) return undefined;
  const end = data.byteOffset + data.length;
  return new DataView(data.buffer, end - 4, 4).getUint32(0, true);
}

/** Gunzip `data` into at most `maxBytes`, and never more than the body itself declares. */
export async function inflateBounded(data: Uint8Array, maxBytes: number): Promise<Buffer> {
  const declared = declaredInflatedSize(data);
  if (declared !== undefined && declared > maxBytes) {
    throw limitExceeded(
      "maxInflatedBytes",
      `a gzip body declares ${declared} inflated bytes, over the limit of ${maxBytes}`,
      { bytes: declared, max: maxBytes },
    );
  }
  // Not gzip: the decoder says what is wrong with it, within the limit.
  const bound = Math.max(1, declared ?? maxBytes);
  try {
    return await gunzipAsync(data, {
      maxOutputLength: bound,
      // One output buffer that fits the declared size (allocated uninitialised, so a false
      // declaration costs address space, not resident memory, until bytes are written).
      chunkSize: Math.max(64, Math.min(bound, maxBytes) + 1),
    });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw limitExceeded(
        "maxInflatedBytes",
        declared === undefined || declared >= maxBytes
          ? `a gzip body inflates to more than the limit of ${maxBytes} bytes`
          : `a gzip body inflates to more than the ${declared} bytes it declares (send one gzip member)`,
        { max: maxBytes, ...(declared === undefined ? {} : { declared }) },
      );
    }
    throw error;
  }
}
