/**
 * The codec's synchronous paths (encodeNow, decodeMessageNow) give what encode and decode give,
 * without a promise for plain JSON bodies, and the same coded errors for bad or oversized ones.
 */
import { headers as natsHeaders } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { BodyCodec } from "../../../src/bus/codec.js";
import { Header } from "../../../src/bus/headers.js";
import { isHookbusError } from "../../../src/foundation/errors.js";

const codec = new BodyCodec(undefined, {
  compressAbove: 1024,
  limits: { maxEncodedBytes: 4096, maxDepth: 4 },
});

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    return isHookbusError(error) ? error.code : `not coded: ${String(error)}`;
  }
  return undefined;
}

describe("encodeNow / decodeMessageNow", () => {
  it("round-trips a small body without a promise", () => {
    const value = { callId: "c1", event: { n: 1, s: "é" } };
    const encoded = codec.encodeNow(value);
    expect(encoded).not.toBeInstanceOf(Promise);
    if (encoded instanceof Promise) return;
    expect(encoded.encoding).toBe("json");
    const decoded = codec.decodeMessageNow({ data: encoded.data });
    expect(decoded).not.toBeInstanceOf(Promise);
    expect(decoded).toEqual(value);
  });

  it("returns a promise for a body that must be gzipped, and decodes it through the same call", async () => {
    const value = { text: "x".repeat(3000) };
    const encoding = codec.encodeNow(value);
    expect(encoding).toBeInstanceOf(Promise);
    const encoded = await encoding;
    expect(encoded.encoding).toBe("gzip");
    const h = natsHeaders();
    h.set(Header.Encoding, "gzip");
    const decoded = codec.decodeMessageNow({ data: encoded.data, headers: h });
    expect(decoded).toBeInstanceOf(Promise);
    expect(await decoded).toEqual(value);
  });

  it("refuses, with the codes decode uses, an oversized, a too deep and an unparsable body", async () => {
    const big = new TextEncoder().encode(JSON.stringify({ s: "y".repeat(5000) }));
    expect(codeOf(() => codec.decodeMessageNow({ data: big }))).toBe("HOOKBUS_LIMIT_EXCEEDED");
    await expect(codec.decode(big, undefined)).rejects.toMatchObject({
      code: "HOOKBUS_LIMIT_EXCEEDED",
    });
    const deep = new TextEncoder().encode('{"a":{"b":{"c":{"d":{"e":1}}}}}');
    expect(codeOf(() => codec.decodeMessageNow({ data: deep }))).toBe("HOOKBUS_LIMIT_EXCEEDED");
    const broken = new TextEncoder().encode('{"a":');
    expect(codeOf(() => codec.decodeMessageNow({ data: broken }))).toBe("HOOKBUS_BAD_MESSAGE");
    await expect(codec.decode(broken, undefined)).rejects.toMatchObject({
      code: "HOOKBUS_BAD_MESSAGE",
    });
  });

  it("reads text as Buffer did: a byte order mark is refused, an invalid byte becomes U+FFFD", () => {
    const withBom = Uint8Array.of(0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"a":1}'));
    expect(codeOf(() => codec.decodeMessageNow({ data: withBom }))).toBe("HOOKBUS_BAD_MESSAGE");
    const invalid = Uint8Array.of(...new TextEncoder().encode('{"s":"'), 0xff, 0x22, 0x7d);
    expect(codec.decodeMessageNow({ data: invalid })).toEqual({ s: "\ufffd" });
    // A view into a larger buffer (as NATS hands a message's data) reads only its own bytes.
    const framed = new TextEncoder().encode('xx{"v":2}yy').subarray(2, 9);
    expect(codec.decodeMessageNow({ data: framed })).toEqual({ v: 2 });
  });
});
