/**
 * What the tests with encryption on share: a KEK of their own, and the record keys a reader
 * holding it opens a pipeline's sealed records with.
 */
import { randomBytes } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Subjects } from "../../src/bus/subjects.js";
import {
  DataKeyStore,
  parseKek,
  RecordKeys,
  type KeyEncryptionKey,
} from "../../src/privacy/index.js";

/** A fresh random KEK, as an operator's `HOOKBUS_KEK` would give. */
export function testKek(): KeyEncryptionKey {
  return parseKek(randomBytes(32).toString("hex"), "test");
}

/** The record keys of a reader that holds `kek`, on the pipeline's reader connection. */
export async function readerRecordKeys(
  pipeline: { connections: { reader: NatsConnection }; subjects: Subjects },
  kek: KeyEncryptionKey,
): Promise<RecordKeys> {
  return new RecordKeys(
    await DataKeyStore.open(pipeline.connections.reader, pipeline.subjects, kek),
  );
}
