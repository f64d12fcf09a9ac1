/** Coordinator signing keys: nkey text, native Ed25519, interoperable with the nkeys library. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromPublic } from "@nats-io/nkeys";
import { describe, expect, it } from "vitest";
import {
  SignatureVerifier,
  createSigningKey,
  parseTrustedKeys,
  signingKeyFromFile,
  signingKeyFromSeed,
} from "../../../src/log/sign/keys.js";

describe("coordinator signing keys", () => {
  it("signs natively what the nkeys library verifies, and verifies it itself", () => {
    const { seed, publicKey } = createSigningKey();
    const key = signingKeyFromSeed(seed);
    expect(key.publicKey).toBe(publicKey);
    const data = new TextEncoder().encode("a batch");
    const signature = key.sign(data);
    expect(fromPublic(publicKey).verify(data, Buffer.from(signature, "base64"))).toBe(true);
    const verifier = new SignatureVerifier([publicKey]);
    expect(verifier.verify(publicKey, data, signature)).toBe(true);
    expect(verifier.verify(publicKey, new TextEncoder().encode("another"), signature)).toBe(false);
    expect(verifier.verify(createSigningKey().publicKey, data, signature)).toBe(false);
  });

  it("reads seed files with comments, and trusted lists as hookbus auth writes them", () => {
    const dir = mkdtempSync(join(tmpdir(), "sign-keys-"));
    const { seed, publicKey } = createSigningKey();
    writeFileSync(join(dir, "c.sign.nk"), `# a comment\n${seed}\n`);
    expect(signingKeyFromFile(join(dir, "c.sign.nk")).publicKey).toBe(publicKey);
    const second = createSigningKey().publicKey;
    writeFileSync(join(dir, "trusted"), `# header\n${publicKey} c1\n\n${second} c2 # two\n`);
    expect(parseTrustedKeys([], join(dir, "trusted"))).toEqual([publicKey, second]);
    expect(parseTrustedKeys([`${publicKey},${second}`])).toEqual([publicKey, second]);
  });

  it("refuses what is not a key, with a code", () => {
    expect(() => signingKeyFromSeed("SU-not-a-seed")).toThrow(
      expect.objectContaining({ code: "HOOKBUS_SIGN_KEY_INVALID" }),
    );
    expect(() => parseTrustedKeys(["AAAA"])).toThrow(
      expect.objectContaining({ code: "HOOKBUS_SIGN_KEY_INVALID" }),
    );
    expect(() => parseTrustedKeys([], "/nonexistent/keys")).toThrow(
      expect.objectContaining({ code: "HOOKBUS_SIGN_KEY_INVALID" }),
    );
  });
});
