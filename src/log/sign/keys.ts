/**
 * Coordinator signing keys: nkeys (Ed25519), like the sealer's, issued per coordinator by
 * `hookbus auth` (`<keys>/coordinator-<name>.sign.nk`, the seed; the public keys in
 * `<keys>/coordinator-signing-keys`, the list the sealer and `audit verify` trust).
 *
 * Signing and checking use Node's native Ed25519 (node:crypto), not the nkeys library's
 * JavaScript one: a coordinator signs on its hot path, and the native code is several times
 * faster. The nkey text is only the storage format; its 32-byte seed and public key are decoded
 * here (RFC 4648 base32, the nkeys layout: prefix bytes, key, CRC-16).
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { createAccount, fromPublic, fromSeed } from "@nats-io/nkeys";
import { HookbusError } from "../../foundation/errors.js";

/** A coordinator's key for signing the records it writes (docs/security.md, "Signed decisions"). */
export interface RecordSigningKey {
  /** The nkey public key (`A…`) verifiers trust. */
  publicKey: string;
  /** Ed25519 signature of `data`, base64. */
  sign(data: Uint8Array): string;
}

const SEED_PATTERN = /\bSA[A-Z2-7]{56}\b/;
const PUBLIC_PATTERN = /^A[A-Z2-7]{55}$/;
/** DER prefixes that wrap a raw Ed25519 seed (PKCS#8) and public key (SPKI) for node:crypto. */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function keyError(message: string, details: Record<string, unknown> = {}, cause?: unknown) {
  return new HookbusError("HOOKBUS_SIGN_KEY_INVALID", message, details, cause);
}

function base32Decode(text: string): Buffer {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text) {
    const index = BASE32.indexOf(ch);
    if (index < 0) throw keyError("not base32");
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A signing key from a seed text (`SA…`), checked by the nkeys library (CRC, prefix). */
export function signingKeyFromSeed(seed: string): RecordSigningKey {
  const match = SEED_PATTERN.exec(seed);
  if (match === null)
    throw keyError("the coordinator signing key is not an account nkey seed (SA…)");
  let publicKey: string;
  try {
    publicKey = fromSeed(new TextEncoder().encode(match[0])).getPublicKey();
  } catch (error) {
    throw keyError(
      `the coordinator signing key is not a valid nkey seed: ${String(error)}`,
      {},
      error,
    );
  }
  // Layout: 2 prefix bytes, the 32-byte seed, a 2-byte CRC.
  const raw = base32Decode(match[0]).subarray(2, 34);
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, raw]),
    format: "der",
    type: "pkcs8",
  });
  return { publicKey, sign: (data) => sign(null, data, key).toString("base64") };
}

/** The seed in FILE (the first `SA…` seed in it, so comments may surround it). */
export function signingKeyFromFile(path: string): RecordSigningKey {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw keyError(
      `cannot read the coordinator signing key ${path}: ${String(error)}`,
      { path },
      error,
    );
  }
  return signingKeyFromSeed(text);
}

/** A new key pair: the seed (the coordinator's secret) and its public key (for verifiers). */
export function createSigningKey(): { seed: string; publicKey: string } {
  const pair = createAccount();
  return { seed: new TextDecoder().decode(pair.getSeed()), publicKey: pair.getPublicKey() };
}

/** Verifies signatures of trusted keys, each public key decoded once. */
export class SignatureVerifier {
  private readonly keys = new Map<string, KeyObject>();

  constructor(trusted: readonly string[]) {
    for (const key of trusted) this.keys.set(key, publicKeyObject(key));
  }

  get size(): number {
    return this.keys.size;
  }

  trusts(publicKey: string): boolean {
    return this.keys.has(publicKey);
  }

  /** Whether `signature` (base64) is a trusted `publicKey`'s signature of `data`. */
  verify(publicKey: string, data: Uint8Array, signature: string): boolean {
    const key = this.keys.get(publicKey);
    if (key === undefined) return false;
    try {
      return verify(null, data, key, Buffer.from(signature, "base64"));
    } catch {
      return false;
    }
  }
}

function publicKeyObject(publicKey: string): KeyObject {
  if (!PUBLIC_PATTERN.test(publicKey)) {
    throw keyError(`${JSON.stringify(publicKey)} is not an account nkey public key (A…)`, {
      key: publicKey,
    });
  }
  try {
    fromPublic(publicKey); // checks the CRC
  } catch (error) {
    throw keyError(
      `${JSON.stringify(publicKey)} is not a valid nkey public key`,
      { key: publicKey },
      error,
    );
  }
  const raw = base32Decode(publicKey).subarray(1, 33);
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" });
}

/**
 * Trusted coordinator public keys from a list (comma- or whitespace-separated) and from a keys
 * file as `hookbus auth` writes it (`<public key> <name>` per line, `#` comments). Each is checked.
 */
export function parseTrustedKeys(list: readonly string[], file?: string): string[] {
  const fromList = list.flatMap((item) => item.split(/[\s,]+/)).filter((k) => k !== "");
  const fromFile = file === undefined || file === "" ? [] : readTrustedKeysFile(file);
  const keys = [...new Set([...fromList, ...fromFile])];
  for (const key of keys) publicKeyObject(key);
  return keys;
}

function readTrustedKeysFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw keyError(
      `cannot read the trusted coordinator keys ${path}: ${String(error)}`,
      { path },
      error,
    );
  }
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*/, "").trim().split(/\s+/)[0] ?? "")
    .filter((key) => key !== "");
}
