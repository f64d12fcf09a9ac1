/**
 * Sealer keys are NATS nkeys (Ed25519): the sealer signs with a seed (`S…`), verifiers check with
 * public keys. Operators create and store them like any other NATS key (`hookbus sealer keygen`
 * or `nk -gen account`).
 */
import { readFileSync } from "node:fs";
import { createAccount, fromPublic, fromSeed, type KeyPair } from "@nats-io/nkeys";
import { HookbusError } from "../../foundation/errors.js";

export interface SealKeyPair {
  publicKey: string;
  sign(data: Uint8Array): string;
}

const SEED_PATTERN = /^S[A-Z2-7]{50,}$/;
const PUBLIC_PATTERN = /^[A-Z][A-Z2-7]{50,}$/;

function keyError(message: string, details: Record<string, unknown> = {}, cause?: unknown) {
  return new HookbusError("HOOKBUS_SEAL_KEY_INVALID", message, details, cause);
}

/** A signing key from a seed text (`S…`). */
export function sealKeyFromSeed(seed: string): SealKeyPair {
  const text = seed.trim();
  if (!SEED_PATTERN.test(text)) throw keyError("the sealer key is not an nkey seed (S…)");
  let pair: KeyPair;
  try {
    pair = fromSeed(new TextEncoder().encode(text));
  } catch (error) {
    throw keyError(`the sealer key is not a valid nkey seed: ${String(error)}`, {}, error);
  }
  return {
    publicKey: pair.getPublicKey(),
    sign: (data) => Buffer.from(pair.sign(data)).toString("base64"),
  };
}

/**
 * The seed in FILE, as the sealer's signing key: the first line that is a seed (starts with S),
 * or `seed: S…` as `hookbus sealer keygen` prints it, so its output can be the key file as is.
 */
export function sealKeyFromFile(path: string): SealKeyPair {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw keyError(`cannot read the sealer key file ${path}: ${String(error)}`, { path }, error);
  }
  const line = text
    .split(/\r?\n/)
    .map((l) => l.trim().replace(/^seed:\s*/, ""))
    .find((l) => l.startsWith("S"));
  if (line === undefined) throw keyError(`no nkey seed (S…) in ${path}`, { path });
  return sealKeyFromSeed(line);
}

/** A new key pair: the seed (keep it secret, give it to the sealer) and its public key. */
export function createSealKey(): { seed: string; publicKey: string } {
  const pair = createAccount();
  return { seed: new TextDecoder().decode(pair.getSeed()), publicKey: pair.getPublicKey() };
}

/** Public keys from a comma- or whitespace-separated list; each must be a valid nkey. */
export function parsePublicKeys(list: readonly string[]): string[] {
  const keys = list.flatMap((item) => item.split(/[\s,]+/)).filter((k) => k !== "");
  for (const key of keys) {
    let ok = PUBLIC_PATTERN.test(key);
    if (ok) {
      try {
        fromPublic(key);
      } catch {
        ok = false;
      }
    }
    if (!ok) throw keyError(`${JSON.stringify(key)} is not an nkey public key`, { key });
  }
  return keys;
}

/** Whether `signature` (base64) is `publicKey`'s signature of `data`; false for anything malformed. */
export function verifySignature(publicKey: string, data: Uint8Array, signature: string): boolean {
  try {
    return fromPublic(publicKey).verify(data, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}

/**
 * The signing key a command was given: `--key-file` (or HOOKBUS_SEAL_KEY_FILE), else the seed in
 * HOOKBUS_SEAL_SEED. `missing` says what the key is for and how to get one.
 */
export function sealKeyFromFlags(
  keyFile: string | undefined,
  missing: string,
  env: NodeJS.ProcessEnv = process.env,
): SealKeyPair {
  const file = keyFile ?? env.HOOKBUS_SEAL_KEY_FILE;
  if (file !== undefined && file !== "") return sealKeyFromFile(file);
  const seed = env.HOOKBUS_SEAL_SEED;
  if (seed !== undefined && seed !== "") return sealKeyFromSeed(seed);
  throw new HookbusError(
    "HOOKBUS_SEAL_KEY_INVALID",
    `${missing}: pass --key-file FILE (or env HOOKBUS_SEAL_KEY_FILE / HOOKBUS_SEAL_SEED)`,
  );
}
