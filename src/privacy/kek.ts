/**
 * The key-encryption key (KEK): 32 random bytes that wrap every data key of a namespace
 * (docs/privacy.md). Coordinators need it to encrypt, auditors to read; it never travels over
 * NATS. Given as base64 (or 64 hex digits) in HOOKBUS_PRIVACY_KEK, or in a file named by
 * HOOKBUS_PRIVACY_KEK_FILE. A missing or malformed KEK is HOOKBUS_PRIVACY_KEK_INVALID, at start:
 * a coordinator told to encrypt never writes plaintext because its key was bad.
 */
import { readFileSync } from "node:fs";
import { HookbusError } from "../foundation/errors.js";

export const KEK_ENV = "HOOKBUS_PRIVACY_KEK";
export const KEK_FILE_ENV = "HOOKBUS_PRIVACY_KEK_FILE";
export const KEK_BYTES = 32;
/** A key file is a line of text: anything larger is not one. */
const MAX_KEK_FILE_BYTES = 1024;

export interface KeyEncryptionKey {
  readonly bytes: Buffer;
}

function invalid(message: string, details: Record<string, unknown> = {}): HookbusError {
  return new HookbusError("HOOKBUS_PRIVACY_KEK_INVALID", message, details);
}

/** The KEK from its text form: 64 hex digits, or base64 of 32 bytes. */
export function parseKek(text: string, from: string): KeyEncryptionKey {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, "hex")
    : /^[A-Za-z0-9+/]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed, "base64")
      : undefined;
  if (bytes?.length !== KEK_BYTES) {
    throw invalid(
      `${from} does not hold a key-encryption key: 32 bytes as base64 or 64 hex digits`,
      {
        from,
      },
    );
  }
  return { bytes };
}

export function kekFromFile(path: string): KeyEncryptionKey {
  let text: Buffer;
  try {
    text = readFileSync(path);
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_PRIVACY_KEK_INVALID",
      `the key-encryption key file cannot be read: ${(error as Error).message}`,
      { path },
      error,
    );
  }
  if (text.length > MAX_KEK_FILE_BYTES)
    throw invalid(`${path} is too large for a key file`, { path });
  return parseKek(text.toString("utf8"), path);
}

/** The KEK named by the environment (the variable wins over the file), or undefined when neither is set. */
export function kekFromEnv(env: NodeJS.ProcessEnv = process.env): KeyEncryptionKey | undefined {
  const inline = env[KEK_ENV];
  if (inline !== undefined && inline !== "") return parseKek(inline, KEK_ENV);
  const file = env[KEK_FILE_ENV];
  if (file !== undefined && file !== "") return kekFromFile(file);
  return undefined;
}

/** The KEK from the environment, or HOOKBUS_PRIVACY_KEK_INVALID: encryption was asked for. */
export function requireKek(env: NodeJS.ProcessEnv = process.env): KeyEncryptionKey {
  const kek = kekFromEnv(env);
  if (kek === undefined) {
    throw invalid(
      `encryption is on but no key-encryption key is given: set ${KEK_ENV} or ${KEK_FILE_ENV}`,
    );
  }
  return kek;
}
