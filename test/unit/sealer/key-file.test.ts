/** The sealer's key file: a bare seed, or `hookbus sealer keygen`'s output saved as it is. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSealKey, sealKeyFromFile } from "../../../src/log/seal/keys.js";

const dir = mkdtempSync(join(tmpdir(), "hookbus-seal-key-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
};

describe("sealKeyFromFile", () => {
  const { seed, publicKey } = createSealKey();

  it("reads a bare seed with its trailing newline", () => {
    expect(sealKeyFromFile(file("bare.nk", `${seed}\n`)).publicKey).toBe(publicKey);
  });

  it("reads keygen's output saved as it is (seed: … / public key: …)", () => {
    const path = file("keygen.txt", `seed: ${seed}\npublic key: ${publicKey}\n`);
    expect(sealKeyFromFile(path).publicKey).toBe(publicKey);
  });

  it("refuses a file without a seed, with the coded error", () => {
    expect(() => sealKeyFromFile(file("public-only.txt", `public key: ${publicKey}\n`))).toThrow(
      expect.objectContaining({ code: "HOOKBUS_SEAL_KEY_INVALID" }),
    );
  });
});
