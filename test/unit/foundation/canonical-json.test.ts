/** Canonical JSON: the one JSON form that is hashed. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalize } from "../../../src/foundation/canonical-json.js";

/**
 * The canonical form written the plain way (members sorted by UTF-16 code units, joined): the
 * reference the optimized writer must equal. (A key-sorted copy through JSON.stringify is not one:
 * objects put integer-like keys first whatever their insertion order.)
 */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => reference(v ?? null)).join(",")}]`;
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const members = Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${reference((value as never)[key])}`);
  return `{${members.join(",")}}`;
}

describe("canonicalize", () => {
  it("equals the plain sorted-members form for any JSON value, and parses back to it (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalize(value);
        expect(text).toBe(reference(value));
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });

  it("writes any string, lone surrogates and controls included, and any key count as the plain form (property)", () => {
    // Lone and paired surrogates, quotes, backslashes and controls beside plain characters.
    const unit = fc.oneof(
      fc.constantFrom("\ud800", "\udfff", "\ud83d\ude00", '"', "\\", "\n", "\u0001", "\u007f"),
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
    );
    const text = fc.string({ unit, maxLength: 12 });
    const member = fc.oneof(text, fc.integer());
    // Few keys (sorted in place) and many (the array's own sort).
    const object = fc.oneof(
      fc.dictionary(text, member, { maxKeys: 16 }),
      fc.dictionary(text, member, { minKeys: 17, maxKeys: 40 }),
    );
    fc.assert(
      fc.property(fc.oneof(text, object, fc.array(object, { maxLength: 3 })), (value) => {
        expect(canonicalize(value)).toBe(reference(value));
      }),
      { numRuns: 1000 },
    );
  });

  it("sorts keys at every depth and writes no whitespace", () => {
    expect(canonicalize({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it("writes strings and numbers as JSON.stringify does (RFC 8785 for ordinary JSON)", () => {
    expect(canonicalize({ s: 'é "q" \n \u0001 😀', n: [1e21, 0.1, -0, 100, 1.5e-7] })).toBe(
      '{"n":[1e+21,0.1,0,100,1.5e-7],"s":"é \\"q\\" \\n \\u0001 😀"}',
    );
  });

  it("sorts keys by UTF-16 code units (as RFC 8785 does), not by locale", () => {
    expect(canonicalize({ "\u00e9": 1, z: 2, Z: 3, "\ud83d\ude00": 4, "\uff21": 5 })).toBe(
      '{"Z":3,"z":2,"é":1,"😀":4,"Ａ":5}',
    );
  });

  it("drops undefined members and writes undefined array elements as null, like a JSON round trip", () => {
    const value = { a: undefined, b: [undefined, 1], c: { toJSON: () => "x" } };
    expect(canonicalize(value)).toBe('{"b":[null,1],"c":"x"}');
    expect(canonicalize(JSON.parse(JSON.stringify(value)))).toBe(canonicalize(value));
  });

  it("refuses values with no JSON form", () => {
    expect(() => canonicalize(undefined)).toThrow(TypeError);
    expect(() => canonicalize({ n: 1n })).toThrow(TypeError);
  });
});
