/**
 * One nkey per user, kept in `<dir>/<role>-<name>.nk` (the seed, readable by its owner only). An
 * existing key file is reused, so running `hookbus auth` again after adding an agent changes no
 * one else's key; deleting a file and re-running rotates that user's key.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createUser, fromSeed } from "@nats-io/nkeys";
import { encodeToken } from "../bus/tokens.js";
import { HookbusError } from "../foundation/errors.js";
import type { AuthUser } from "./description.js";
import { parseNkeySeed } from "../bus/nkey-seed.js";

export interface UserKey {
  /** The seed file the user's process reads (`--nkey FILE`). */
  file: string;
  /** The public key (`U…`) the server configuration names. */
  publicKey: string;
}

export function keyFileName(user: AuthUser): string {
  return `${user.role}-${encodeToken(user.name)}.nk`;
}

export function loadOrCreateKey(dir: string, user: AuthUser): UserKey {
  const file = join(dir, keyFileName(user));
  try {
    if (existsSync(file)) {
      const seed = parseNkeySeed(readFileSync(file, "utf8"), file);
      return { file, publicKey: fromSeed(seed).getPublicKey() };
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const pair = createUser();
    const seed = new TextDecoder().decode(pair.getSeed());
    writeFileSync(file, `${seed}\n`, { mode: 0o600, flag: "wx" });
    chmodSync(file, 0o600);
    return { file, publicKey: pair.getPublicKey() };
  } catch (error) {
    if (error instanceof HookbusError) throw error;
    throw new HookbusError(
      "HOOKBUS_INVALID_AUTH",
      `cannot read or write the key file ${file}: ${String((error as Error).message)}`,
      { file },
      error,
    );
  }
}
