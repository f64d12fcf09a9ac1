/** `hookbus auth` without the CLI: a description file in, a server configuration and key files out. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { HookbusError } from "../foundation/errors.js";
import { generatedUsers, renderAuthConfig, type GeneratedUser } from "./config.js";
import { parseAuthDescription, type AuthDescription } from "./description.js";
import { loadOrCreateKey } from "./keys.js";
import { issueSigningKeys, type CoordinatorSigningKey } from "./signing-keys.js";

/** Description files are a few kilobytes; 16 MiB allows ~100,000 users and no more. */
const MAX_DESCRIPTION_BYTES = 16 * 1024 * 1024;

export interface GenerateAuthOptions {
  /** The nats-server configuration to write (an `authorization` block). */
  configFile: string;
  /** Where the users' seed files live (created 0700; existing seeds are kept). */
  keyDir: string;
}

export interface GeneratedAuth {
  description: AuthDescription;
  users: GeneratedUser[];
  configFile: string;
  /** Each coordinator's record signing key (docs/security.md, "Signed decisions"). */
  signingKeys: CoordinatorSigningKey[];
  /** The trusted coordinator keys, for the sealer and `audit verify` (`--coordinator-keys`). */
  trustedKeysFile: string;
}

export function readAuthDescription(path: string): AuthDescription {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_INVALID_AUTH",
      `cannot read ${path}: ${(error as Error).message}`,
      {},
      error,
    );
  }
  if (text.length > MAX_DESCRIPTION_BYTES)
    throw new HookbusError("HOOKBUS_INVALID_AUTH", `${path} is larger than 16 MiB`, {});
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_INVALID_AUTH",
      `${path} is not valid JSON: ${(error as Error).message}`,
      {},
      error,
    );
  }
  return parseAuthDescription(json);
}

export function generateAuth(
  description: AuthDescription,
  options: GenerateAuthOptions,
): GeneratedAuth {
  const users = generatedUsers(description, (user) => loadOrCreateKey(options.keyDir, user));
  try {
    mkdirSync(dirname(options.configFile), { recursive: true });
    writeFileSync(options.configFile, renderAuthConfig(description, users), { mode: 0o644 });
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_INVALID_AUTH",
      `cannot write ${options.configFile}: ${(error as Error).message}`,
      {},
      error,
    );
  }
  // A privacy user signs the erasure records it appends, so verify trusts them like a coordinator's
  // (`privacy.<name>`: a dot no coordinator name holds).
  const signing = issueSigningKeys(options.keyDir, [
    ...description.coordinators,
    ...description.privacy.map((name) => `privacy.${name}`),
  ]);
  return {
    description,
    users,
    configFile: options.configFile,
    signingKeys: signing.keys,
    trustedKeysFile: signing.trustedFile,
  };
}
