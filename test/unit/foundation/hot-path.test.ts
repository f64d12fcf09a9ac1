/** The hot-path convention's helper: a MaybePromise is awaited only when it is a promise. */
import { describe, expect, expectTypeOf, it } from "vitest";
import { isPromise, type MaybePromise } from "../../../src/foundation/hot-path.js";

describe("isPromise", () => {
  it("tells a promise from a value that is already there, falsy values and thenables included", () => {
    expect(isPromise(Promise.resolve(1))).toBe(true);
    for (const value of [0, "", null, undefined, false, {}, [], { then: "not a function" }])
      expect(isPromise<unknown>(value)).toBe(false);
  });

  it("narrows a MaybePromise to either side", () => {
    const now = (n: number): MaybePromise<number> => (n > 0 ? n : Promise.resolve(n));
    const value = now(1);
    if (isPromise(value)) expectTypeOf(value).toEqualTypeOf<Promise<number>>();
    else expectTypeOf(value).toEqualTypeOf<number>();
    expect(value).toBe(1);
  });
});
