/**
 * Anchors: a small signed statement of the latest seal batch (its index, hash and log range),
 * kept outside NATS (a ticket, an object store, a transparency log). `verify --anchor` proves the
 * seal stream still holds that batch, so a deleted-and-recreated or rewritten history shows.
 *
 * The file is `{"statement": "<JSON text>", "key": "<nkey public key>", "signature": "<base64>"}`;
 * the signature is over the statement's exact UTF-8 bytes.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { Bus } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import { sealStreamName } from "../log/seal/batch.js";
import { verifySignature, type SealKeyPair } from "../log/seal/keys.js";
import { lastBatch } from "../log/seal/stream.js";

export const AnchorStatement = z
  .strictObject({
    v: z.literal(1),
    namespace: z.string(),
    stream: z.string(),
    batch: z.int().min(1),
    hash: z.string().regex(/^[0-9a-f]{64}$/),
    /** The last log sequence the batch seals. */
    toSeq: z.int().min(1),
    sealedAt: z.iso.datetime(),
    anchoredAt: z.iso.datetime(),
  })
  .meta({ id: "AnchorStatement" });
export type AnchorStatement = z.infer<typeof AnchorStatement>;

/** The anchor file: `statement` is an AnchorStatement as JSON text, signed by `key`. */
export const AnchorFile = z
  .strictObject({
    statement: z.string().max(4096),
    key: z.string().max(128),
    signature: z.string().max(256),
  })
  .meta({ id: "AnchorFile" });
export type AnchorFile = z.infer<typeof AnchorFile>;

const invalid = (message: string, cause?: unknown) =>
  new HookbusError("HOOKBUS_ANCHOR_INVALID", message, {}, cause);

/** A signed anchor of the seal stream's latest batch. */
export async function makeAnchor(bus: Bus, key: SealKeyPair): Promise<AnchorFile> {
  const last = await lastBatch(bus);
  if (last?.batch === undefined) {
    throw invalid(
      `nothing to anchor: namespace ${bus.subjects.namespace} has no seal batch yet (is a sealer running?)`,
    );
  }
  const statement: AnchorStatement = {
    v: 1,
    namespace: bus.subjects.namespace,
    stream: sealStreamName(bus.subjects),
    batch: last.batch.index,
    hash: last.hash,
    toSeq: last.batch.toSeq,
    sealedAt: last.batch.sealedAt,
    anchoredAt: new Date().toISOString(),
  };
  const text = JSON.stringify(statement);
  return {
    statement: text,
    key: key.publicKey,
    signature: key.sign(new TextEncoder().encode(text)),
  };
}

/**
 * Read and check an anchor file: well-formed, and signed by one of `keys` (or, with no keys,
 * by the key it names).
 */
export function readAnchor(
  path: string,
  keys: readonly string[],
  namespace: string,
): AnchorStatement {
  let file: AnchorFile;
  try {
    file = AnchorFile.parse(JSON.parse(readFileSync(path, "utf8")));
  } catch (error) {
    throw invalid(
      `cannot read the anchor ${path}: ${String((error as Error)?.message ?? error)}`,
      error,
    );
  }
  if (keys.length > 0 && !keys.includes(file.key)) {
    throw invalid(`the anchor ${path} is signed by ${file.key}, not by a trusted key`);
  }
  if (!verifySignature(file.key, new TextEncoder().encode(file.statement), file.signature)) {
    throw invalid(`the anchor ${path} has a signature that does not verify`);
  }
  let statement: AnchorStatement;
  try {
    statement = AnchorStatement.parse(JSON.parse(file.statement));
  } catch (error) {
    throw invalid(`the anchor ${path} holds no anchor statement`, error);
  }
  if (statement.namespace !== namespace) {
    throw invalid(`the anchor ${path} is for namespace ${statement.namespace}, not ${namespace}`);
  }
  return statement;
}
