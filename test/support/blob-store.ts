/**
 * A blob store for the tests that read and write blobs directly (sealed blobs, blob deadlines):
 * its own namespace with the log streams, chunks of 64 KiB.
 */
import { Bus } from "../../src/bus/bus.js";
import { BlobStore } from "../../src/bus/blobs.js";
import { ensureLogStreams } from "../../src/bus/streams.js";
import { uniqueNamespace, type FileNatsServer } from "./nats.js";

export const BLOB_CHUNK = 64 * 1024;

export interface TestBlobStore {
  bus: Bus;
  store: BlobStore;
}

/** On a connection of the file's server (closed after the file) and a namespace of its own. */
export async function openTestBlobStore(
  nats: FileNatsServer,
  prefix: string,
): Promise<TestBlobStore> {
  const nc = await nats.connect();
  const bus = await Bus.open(nc, { namespace: uniqueNamespace(prefix) });
  await ensureLogStreams(bus.jsm, bus.subjects);
  return { bus, store: new BlobStore(bus.js, bus.jsm, bus.subjects, BLOB_CHUNK) };
}
