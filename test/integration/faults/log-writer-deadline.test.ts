/**
 * The coordinator's log writer gives up at the caller's deadline, also for a record large enough
 * for the blob store: with the server gone, a 2 MiB record fails with HOOKBUS_LOG_UNAVAILABLE
 * soon after its deadline instead of waiting out the JetStream timeouts of its blob chunks.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { ensureLogStreams } from "../../../src/bus/streams.js";
import { LogWriter } from "../../../src/coordinator/log-writer.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { RECORD_VERSION, type ObservationRecord } from "../../../src/log/record.js";
import { rejection } from "../../support/wait.js";
import { uniqueNamespace, useNatsServer } from "./harness.js";

const nats = useNatsServer({ own: true });
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
});

function largeObservation(): ObservationRecord {
  return {
    v: RECORD_VERSION,
    kind: "observation",
    eventId: randomUUID(),
    hook: "llm_output",
    // Incompressible: gzip keeps it above one message, so it goes to the blob store.
    event: { assistantTexts: [randomBytes(1536 * 1024).toString("base64")] },
    context: { agentId: "agent-1", sessionKey: "s-1", runId: "run-1" },
    publishedAt: new Date().toISOString(),
  };
}

describe("log writer and the caller's deadline", () => {
  it("stores a blob-backed record, and gives up at the deadline when the server is gone", async () => {
    const nc = await nats.connect();
    closers.push(() => nc.close());
    const bus = await Bus.open(nc, { namespace: uniqueNamespace("logdl") });
    await ensureLogStreams(bus.jsm, bus.subjects);
    const writer = new LogWriter(bus);
    const subject = bus.subjects.audit("agent-1", "s-1", "llm_output", "observed");
    const stored = largeObservation();
    const appended = await writer.append(subject, stored, stored.eventId, Date.now() + 20_000);
    expect(appended.duplicate).toBe(false);
    // The same id again: the stored record is read back (through its blob) within the deadline.
    const again = await writer.append(subject, stored, stored.eventId, Date.now() + 20_000);
    expect(again).toMatchObject({ duplicate: true, seq: appended.seq });
    expect(again.stored).toEqual(stored);

    await nats.handle().kill();
    try {
      const started = Date.now();
      const record = largeObservation();
      const error = await rejection(writer.append(subject, record, record.eventId, started + 500));
      expect(isHookbusError(error, "HOOKBUS_LOG_UNAVAILABLE"), String(error)).toBe(true);
      // One JetStream timeout per blob chunk would take seconds each; the margin is for a loaded
      // machine's event-loop lag.
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await nats.handle().start();
    }
  }, 60_000);
});
