/**
 * nkey seeds for connections. `hookbus auth` writes one seed file per user (the seed alone, as
 * `nk -gen user` does); services read it with `--nkey FILE` / `HOOKBUS_NKEY_FILE`, or take the
 * seed itself from `HOOKBUS_NKEY_SEED` (for secret stores that inject environment variables).
 */
import { readFileSync } from "node:fs";
import { fromSeed } from "@nats-io/nkeys";
import { HookbusError } from "../foundation/errors.js";

/** The first user seed (`SU…`) in a text, so a file may carry comments around it. */
const USER_SEED = /\bSU[A-Z2-7]{56}\b/;

export function parseNkeySeed(text: string, from: string): Uint8Array {
  const match = USER_SEED.exec(text);
  if (match !== null) {
    const seed = new TextEncoder().encode(match[0]);
    try {
      fromSeed(seed);
      return seed;
    } catch {
      // fall through to the coded error: a checksum that does not match is not a seed
    }
  }
  throw new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `${from} holds no valid nkey user seed (SU…)`,
    {
      argument: "nkey",
    },
  );
}

/** The seed to authenticate with, from a file or the seed itself; undefined when neither is set. */
export function readNkeySeed(
  file: string | undefined,
  seed: string | undefined,
): Uint8Array | undefined {
  if (file !== undefined && file !== "") {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `cannot read nkey seed file ${file}: ${String((error as Error).message)}`,
        { argument: "nkey" },
        error,
      );
    }
    return parseNkeySeed(text, file);
  }
  if (seed !== undefined && seed !== "") return parseNkeySeed(seed, "HOOKBUS_NKEY_SEED");
  return undefined;
}

/**
 * A seed file `hookbus auth` wrote, ready for nats.js' `nkeyAuthenticator` (which takes the seed
 * alone: the file's trailing newline would fail its checksum). Coded errors for a missing or
 * unreadable file and for one without a user seed.
 */
export function readNkeySeedFile(file: string): Uint8Array {
  const seed = readNkeySeed(file, undefined);
  if (seed === undefined)
    throw new HookbusError("HOOKBUS_INVALID_ARGUMENT", "no nkey seed file given", {
      argument: "nkey",
    });
  return seed;
}
