/**
 * Blob reads and writes are bounded by the caller's deadline (issue 10, item 2): with the server
 * gone, a blob-backed body fails with HOOKBUS_CALL_TIMEOUT at the caller's deadline instead of
 * waiting out the JetStream API timeout once per chunk.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { rejection } from "../../support/wait.js";
import { BLOB_CHUNK, openTestBlobStore } from "../../support/blob-store.js";
import { useNatsServer } from "./harness.js";

const nats = useNatsServer({ own: true });

describe("blob reads and the caller's deadline", () => {
  it("reads a stored blob within a deadline, and fails at the deadline when the server is gone", async () => {
    const { store } = await openTestBlobStore(nats, "blobdl");
    // Five full chunks once sealed: the GCM tag adds 16 bytes (docs/privacy.md, "Blobs").
    const bytes = randomBytes(5 * BLOB_CHUNK - 16);
    const ref = await store.put(bytes, "agent-a");
    expect(ref.chunks).toBe(5);
    const read = await store.get(ref, { deadline: Date.now() + 10_000 });
    expect(Buffer.from(read).equals(bytes)).toBe(true);

    // Already past: refused before any chunk is asked for.
    const late = await rejection(store.get(ref, { deadline: Date.now() - 1 }));
    expect(isHookbusError(late, "HOOKBUS_CALL_TIMEOUT")).toBe(true);

    await nats.handle().kill();
    try {
      const started = Date.now();
      const error = await rejection(store.get(ref, { deadline: started + 500 }));
      const took = Date.now() - started;
      expect(isHookbusError(error, "HOOKBUS_CALL_TIMEOUT"), String(error)).toBe(true);
      expect((error as { details: object }).details).toMatchObject({ blob: ref.blob, chunks: 5 });
      // Without the deadline each chunk would wait the API timeout (seconds); the margin is for a
      // loaded machine's event-loop lag, far below one API timeout.
      expect(took).toBeGreaterThanOrEqual(450);
      expect(took).toBeLessThan(4000);

      // Storing a large body (the coordinator's policy request) is cut at the deadline too.
      const putStarted = Date.now();
      const putError = await rejection(
        store.put(randomBytes(3 * BLOB_CHUNK), "agent-a", { deadline: putStarted + 500 }),
      );
      expect(isHookbusError(putError, "HOOKBUS_CALL_TIMEOUT"), String(putError)).toBe(true);
      expect(Date.now() - putStarted).toBeLessThan(4000);
    } finally {
      await nats.handle().start();
    }
  }, 60_000);
});
