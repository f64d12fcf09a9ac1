/**
 * A key twice in one object (src/foundation/json-keys.ts, through the codec that applies it):
 * refused exactly when JSON.parse would drop one, however the keys are spelled (escapes, invalid
 * UTF-8 read as U+FFFD), at any depth; log records exempt; the depth answer unchanged.
 */
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BodyCodec } from "../../../src/bus/codec.js";
import { parsedMembers } from "../../../src/foundation/json-keys.js";
import { jsonDepthExceeds, jsonMembers } from "../../../src/foundation/limits.js";
import { referenceDepthExceeds } from "../../support/depth-reference.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const codec = new BodyCodec(undefined);

/** The codec's answer for a plain JSON body: "ok", or the code it refuses the body with. */
function verdictOn(body: Uint8Array, record = false): string {
  try {
    codec.decodeMessageNow({ data: body }, { record });
    return "ok";
  } catch (error) {
    const { code, details } = error as { code: string; details?: { reason?: string } };
    return details?.reason === "duplicate-key" ? "key twice" : code;
  }
}
const scan = (text: string) => verdictOn(bytes(text));

/** A JSON text as a tree whose objects are lists of entries, so a key may be given twice. */
type Tree =
  | { kind: "object"; entries: { key: string; escaped: boolean[]; value: Tree }[] }
  | { kind: "array"; items: Tree[] }
  | { kind: "leaf"; value: unknown };

/** The key spelled with some of its characters as `\uXXXX` escapes: the same key to a parser. */
function spell(key: string, escaped: boolean[]): string {
  let out = '"';
  [...key].forEach((char, i) => {
    if (escaped[i % Math.max(1, escaped.length)] === true)
      for (let u = 0; u < char.length; u++)
        out += `\\u${char.charCodeAt(u).toString(16).padStart(4, "0")}`;
    else out += JSON.stringify(char).slice(1, -1);
  });
  return `${out}"`;
}

function text(tree: Tree, space: string): string {
  switch (tree.kind) {
    case "leaf":
      return JSON.stringify(tree.value);
    case "array":
      return `[${tree.items.map((item) => text(item, space)).join(`,${space}`)}]`;
    case "object":
      return `{${space}${tree.entries
        .map((e) => `${spell(e.key, e.escaped)}${space}:${space}${text(e.value, space)}`)
        .join(`,${space}`)}${space}}`;
  }
}

/** The reference answer: some object of the tree lists one key twice. */
function hasKeyTwice(tree: Tree): boolean {
  if (tree.kind === "leaf") return false;
  if (tree.kind === "array") return tree.items.some(hasKeyTwice);
  const keys = tree.entries.map((e) => e.key);
  return new Set(keys).size < keys.length || tree.entries.some((e) => hasKeyTwice(e.value));
}

/** Few keys, so that objects repeat one often; ASCII, above ASCII, and one outside the BMP. */
const KEY = fc.constantFrom("a", "b", "params", "é", "\u2028", "😀", "__proto__", "1", "01", "");

const trees = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ kind: fc.constant("leaf" as const), value: fc.jsonValue({ maxDepth: 1 }) }),
    fc.record({
      kind: fc.constant("array" as const),
      items: fc.array(tie("tree"), { maxLength: 4 }),
    }),
    fc.record({
      kind: fc.constant("object" as const),
      entries: fc.array(
        fc.record({
          key: KEY,
          escaped: fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }),
          value: tie("tree"),
        }),
        { maxLength: 5 },
      ),
    }),
  ),
})).tree;

describe("a key twice in one object", () => {
  it("is found exactly when the parser would see one, however the keys are spelled", () => {
    fc.assert(
      fc.property(trees, fc.constantFrom("", " ", "\n\t"), (tree, space) => {
        const json = text(tree, space);
        JSON.parse(json); // the generator writes valid JSON
        expect(scan(json)).toBe(hasKeyTwice(tree) ? "key twice" : "ok");
      }),
      { numRuns: 3000 },
    );
  });

  it("is found among many keys, at any place", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 6 }), { minLength: 17, maxLength: 60 }),
        fc.option(fc.nat(), { nil: undefined }),
        fc.boolean(),
        (keys, repeat, escape) => {
          const listed =
            repeat === undefined ? keys : [...keys, keys[repeat % keys.length]!].reverse();
          const json = `{${listed.map((k, i) => `${spell(k, [escape && i === 0])}:${i}`).join(",")}}`;
          expect(scan(json)).toBe(repeat === undefined ? "ok" : "key twice");
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("is the same key spelled plain and escaped", () => {
    expect(scan('{"a":1,"\\u0061":2}')).toBe("key twice");
    expect(scan('{"block":true,"blockReason":"x","bl\\u006fck":false}')).toBe("key twice");
    expect(scan('{"\\/":1,"/":2}')).toBe("key twice");
    expect(scan('{"a":{"b":1},"b":{"a":1}}')).toBe("ok");
    expect(scan('[{"a":1},{"a":1}]')).toBe("ok");
    expect(scan('{"a":"\\"a\\":1","b":{"a":[{"a":1}]},"c":"a"}')).toBe("ok");
  });

  it("counts two invalid UTF-8 keys as one when both read as U+FFFD", () => {
    const json = Uint8Array.of(
      0x7b,
      0x22,
      0xff,
      0x22,
      0x3a,
      0x31,
      0x2c,
      0x22,
      0xfe,
      0x22,
      0x3a,
      0x32,
      0x7d,
    );
    expect(Object.keys(JSON.parse(new TextDecoder().decode(json)) as object)).toHaveLength(1);
    expect(verdictOn(json)).toBe("key twice");
  });

  it("is refused with HOOKBUS_BAD_MESSAGE, in gzip bodies too; log records are read as stored", async () => {
    const twice = bytes('{"hook":"before_tool_call","event":{"params":{"path":"a","path":"b"}}}');
    expect(() => codec.decodeMessageNow({ data: twice })).toThrow(
      expect.objectContaining({ code: "HOOKBUS_BAD_MESSAGE" }),
    );
    const zipped = new Uint8Array(gzipSync(twice));
    await expect(codec.decode(zipped, "gzip")).rejects.toMatchObject({
      code: "HOOKBUS_BAD_MESSAGE",
      details: { reason: "duplicate-key" },
    });
    expect(verdictOn(twice, true)).toBe("ok");
  });
});

describe("a number JSON.parse reads as Infinity", () => {
  const reasonOf = (text: string) => {
    try {
      codec.decodeMessageNow({ data: bytes(text) });
      return "ok";
    } catch (error) {
      return (error as { code: string; details?: { reason?: string } }).details?.reason;
    }
  };

  it("is refused at any place (the coordinator would decide on Infinity and write null)", () => {
    for (const text of [
      "1e999",
      '{"event":{"params":{"limit":1e999}}}',
      '{"a":[1,2,{"b":[-1e400]}]}',
      '{"a":{"b":1},"c":[0.5e309]}',
    ])
      expect(reasonOf(text), text).toBe("non-finite-number");
  });

  it("is the only number refused: the largest doubles and tiny ones that round to 0 pass", () => {
    for (const text of ['{"n":1.7976931348623157e308}', '{"n":-1e-400}', '{"n":[0,-0,5e-324]}'])
      expect(reasonOf(text), text).toBe("ok");
  });

  it("in a log record read as stored is read as stored", () => {
    expect(verdictOn(bytes('{"n":1e999}'), true)).toBe("ok");
  });
});

describe("depth, in the same pass", () => {
  it("agrees with the depth-only scan on any JSON and any limit, and counts its members", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 14 }), (value, max) => {
        const json = bytes(JSON.stringify(value));
        const members = jsonMembers(json, max);
        if (jsonDepthExceeds(json, max)) expect(members).toBe(-1);
        else expect(members).toBe(parsedMembers(value));
      }),
      { numRuns: 1000 },
    );
  });

  it("never throws on any bytes and finds depth as the reference scan does", () => {
    const jsonish = fc.constantFrom(...'{}[]\\"ab:, \u00e9');
    fc.assert(
      fc.property(
        fc.array(jsonish, { maxLength: 200 }),
        fc.integer({ min: 0, max: 12 }),
        (parts, max) => {
          const json = bytes(parts.join(""));
          expect(jsonMembers(json, max) < 0).toBe(referenceDepthExceeds(json, max));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("refuses a deep body before it is parsed", () => {
    expect(scan(`${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`)).toBe(
      "HOOKBUS_LIMIT_EXCEEDED",
    );
  });
});
