/**
 * Blobs sealed under a key of their own (docs/privacy.md, "Blobs"): the stored chunks are
 * ciphertext addressed by their own digest, the reference alone opens them, and a reference with
 * any other key (or a chunk changed in the store) is refused, never read as content.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { rejection } from "../../support/wait.js";
import { openTestBlobStore } from "../../support/blob-store.js";
import { useNatsServer } from "../faults/harness.js";

const nats = useNatsServer();

describe("sealed blobs", () => {
  it("stores ciphertext only; the reference's key opens it, no other key does", async () => {
    const { bus, store } = await openTestBlobStore(nats, "blobseal");
    const marker = Buffer.from("Pangolin-8812-Harrow");
    const bytes = Buffer.concat([randomBytes(100 * 1024), marker, randomBytes(100 * 1024)]);

    const ref = await store.put(bytes, "agent-a");
    expect(ref.key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(ref.size).toBe(bytes.length + 16);
    const stored: Buffer[] = [];
    for (let index = 0; index < ref.chunks; index++) {
      const msg = await bus.jsm.streams.getMessage(bus.subjects.blobStream, {
        last_by_subj: `${bus.subjects.blob(ref.owner, ref.blob)}.${index}`,
      });
      stored.push(Buffer.from(msg!.data));
    }
    expect(Buffer.concat(stored).includes(marker)).toBe(false);
    expect(Buffer.from(await store.get(ref)).equals(bytes)).toBe(true);

    // The same body again is stored again, under another key and address.
    const again = await store.put(bytes, "agent-a");
    expect(again.blob).not.toBe(ref.blob);

    // Another body's key does not open it: refused, not read.
    const wrongKey = await rejection(store.get({ ...ref, key: again.key! }));
    expect(isHookbusError(wrongKey, "HOOKBUS_BLOB_MISSING"), String(wrongKey)).toBe(true);
    const noNonce = await rejection(store.get({ ...ref, iv: "AAAA" }));
    expect(isHookbusError(noNonce, "HOOKBUS_BLOB_MISSING"), String(noNonce)).toBe(true);
  });
});
