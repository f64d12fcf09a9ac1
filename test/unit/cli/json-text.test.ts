/** Strict JSON for hand-written files: the values JSON.parse gives, or a coded error with line:column. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { MAX_JSON_DEPTH, parseJsonText } from "../../../src/foundation/json-text.js";

const options = { code: "HOOKBUS_INVALID_REGISTRY", source: "f.json" } as const;

function failure(text: string): { message: string; line: unknown; column: unknown } {
  try {
    parseJsonText(text, options);
  } catch (error) {
    if (!isHookbusError(error, "HOOKBUS_INVALID_REGISTRY")) throw error;
    return { message: error.message, line: error.details.line, column: error.details.column };
  }
  throw new Error(`accepted ${text}`);
}

describe("parseJsonText", () => {
  it("gives what JSON.parse gives for any JSON without repeated keys", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value, null, 1);
        expect(parseJsonText(text, options)).toEqual(JSON.parse(text));
      }),
    );
  });

  it("names the line and column of a mistake", () => {
    expect(failure('{\n  "a": 1,\n  "b" 2\n}')).toMatchObject({
      message: 'f.json:3:7: expected ":" after a key, found "2"',
      line: 3,
      column: 7,
    });
    expect(failure("[1, 2")).toMatchObject({ line: 1, column: 6 });
    expect(failure('{"a": 01}').message).toContain("f.json:1:8:");
    expect(failure('{"a": "x\ny"}').message).toContain("unterminated string");
  });

  it("refuses a key given twice in one object, but not in two objects", () => {
    expect(failure('{"a": 1, "b": {"a": 2}, "a": 3}')).toMatchObject({ line: 1, column: 25 });
    expect(parseJsonText('[{"a": 1}, {"a": 2}]', options)).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('keeps "__proto__" as data and bounds the nesting', () => {
    const parsed = parseJsonText('{"__proto__": {"polluted": true}}', options) as object;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(["__proto__"]);
    const deep = "[".repeat(MAX_JSON_DEPTH + 2) + "]".repeat(MAX_JSON_DEPTH + 2);
    expect(failure(deep).message).toContain(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  });
});
