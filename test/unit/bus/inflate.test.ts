/**
 * Bounded gunzip (src/bus/inflate.ts): honest bodies round-trip; a body declaring more than the
 * limit is refused before inflating; one inflating past its declaration is stopped there.
 */
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { declaredInflatedSize, inflateBounded } from "../../../src/bus/inflate.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { rejection } from "../../support/wait.js";

const MiB = 1024 * 1024;

function withDeclaredSize(gz: Buffer, size: number): Buffer {
  const copy = Buffer.from(gz);
  copy.writeUInt32LE(size, copy.length - 4);
  return copy;
}

describe("inflateBounded", () => {
  it("inflates honest bodies of any size up to the limit, empty included, into one buffer", async () => {
    for (const size of [0, 1, 1000, 64 * 1024 + 3, 2 * MiB]) {
      const body = Buffer.alloc(size, "x");
      const gz = gzipSync(body);
      expect(declaredInflatedSize(gz)).toBe(size);
      const out = await inflateBounded(gz, 2 * MiB);
      expect(out.equals(body)).toBe(true);
    }
  });

  it("refuses a bomb that declares more than the limit before inflating anything", async () => {
    const bomb = gzipSync(Buffer.alloc(64 * MiB, "a"), { level: 9 });
    const error = await rejection(inflateBounded(bomb, 16 * MiB));
    expect(isHookbusError(error, "HOOKBUS_LIMIT_EXCEEDED")).toBe(true);
    expect((error as { details: unknown }).details).toMatchObject({
      limit: "maxInflatedBytes",
      bytes: 64 * MiB,
      max: 16 * MiB,
    });
  });

  it("stops a body that inflates past the size it declares (a lie, or a second member)", async () => {
    const lie = withDeclaredSize(gzipSync(Buffer.alloc(8 * MiB, "a")), 1000);
    const error = await rejection(inflateBounded(lie, 16 * MiB));
    expect(isHookbusError(error, "HOOKBUS_LIMIT_EXCEEDED")).toBe(true);
    expect(String((error as Error).message)).toContain("more than the 1000 bytes it declares");

    const twoMembers = Buffer.concat([gzipSync(Buffer.from("ab")), gzipSync(Buffer.from("cd"))]);
    expect(isHookbusError(await rejection(inflateBounded(twoMembers, MiB)))).toBe(true);
  });

  it("still refuses past the limit when the declaration wraps (ISIZE is the size mod 2^32)", async () => {
    const wrapped = withDeclaredSize(gzipSync(Buffer.alloc(3 * MiB, "a")), 4 * MiB);
    const error = await rejection(inflateBounded(wrapped, 2 * MiB));
    expect(isHookbusError(error, "HOOKBUS_LIMIT_EXCEEDED")).toBe(true);
  });

  it("leaves bytes that are not gzip to the decoder's own error", async () => {
    const error = await rejection(inflateBounded(Buffer.from("not gzip at all, really"), MiB));
    expect(isHookbusError(error)).toBe(false);
    expect(await rejection(inflateBounded(Buffer.from("short"), MiB))).toBeInstanceOf(Error);
  });
});
