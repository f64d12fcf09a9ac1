/**
 * Coordinator signing keys, issued by `hookbus auth` next to the connection keys: one per
 * coordinator in `<dir>/coordinator-<name>.sign.nk` (the seed, 0600, for `--sign-key-file`), and
 * every public key in `<dir>/coordinator-signing-keys` (one `<public key> <name>` per line), the
 * trusted list the sealer and `audit verify` read (`--coordinator-keys`). Like connection keys,
 * an existing seed file is kept; deleting one and re-running rotates that coordinator's key
 * (verifiers then need the old public key too, for the records it signed: keep it in the list).
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeToken } from "../bus/tokens.js";
import { HookbusError } from "../foundation/errors.js";
import { createSigningKey, signingKeyFromFile } from "../log/sign/keys.js";

export interface CoordinatorSigningKey {
  coordinator: string;
  /** The seed file (`--sign-key-file`). */
  file: string;
  publicKey: string;
}

export const TRUSTED_KEYS_FILE = "coordinator-signing-keys";

export function signingKeyFileName(coordinator: string): string {
  return `coordinator-${encodeToken(coordinator)}.sign.nk`;
}

function loadOrCreate(dir: string, coordinator: string): CoordinatorSigningKey {
  const file = join(dir, signingKeyFileName(coordinator));
  if (existsSync(file)) {
    return { coordinator, file, publicKey: signingKeyFromFile(file).publicKey };
  }
  const { seed, publicKey } = createSigningKey();
  writeFileSync(
    file,
    `# hookbus coordinator ${coordinator}: record signing key (keep secret)\n${seed}\n`,
    {
      mode: 0o600,
      flag: "wx",
    },
  );
  chmodSync(file, 0o600);
  return { coordinator, file, publicKey };
}

/** Each coordinator's signing key (kept or created) and the trusted list written from them. */
export function issueSigningKeys(
  dir: string,
  coordinators: readonly string[],
): { keys: CoordinatorSigningKey[]; trustedFile: string } {
  const trustedFile = join(dir, TRUSTED_KEYS_FILE);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const keys = coordinators.map((name) => loadOrCreate(dir, name));
    const lines = [
      "# Trusted coordinator signing keys, written by `hookbus auth`: <public key> <coordinator>.",
      "# Give this file to the sealer and to `hookbus audit verify` (--coordinator-keys).",
      ...keys.map((k) => `${k.publicKey} ${k.coordinator}`),
    ];
    writeFileSync(trustedFile, `${lines.join("\n")}\n`, { mode: 0o644 });
    return { keys, trustedFile };
  } catch (error) {
    if (error instanceof HookbusError) throw error;
    throw new HookbusError(
      "HOOKBUS_INVALID_AUTH",
      `cannot write the coordinator signing keys in ${dir}: ${String((error as Error).message)}`,
      { dir },
      error,
    );
  }
}
