/**
 * A seal append whose answer was lost, then refused as "the stream moved" while the seal stream
 * could not be read: the sealer must not conclude that someone else appended (and stand down)
 * without reading; it retries, reads, and finds its own batch.
 */
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import type { Bus } from "../../../src/bus/bus.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { appendBatch, type AppendTarget } from "../../../src/sealer/append.js";
import type { SealerLease } from "../../../src/sealer/lease.js";

const subjects = new Subjects("sealappend");
const wrongLast = () =>
  new JetStreamApiError({
    err_code: JetStreamApiCodes.StreamWrongLastSequence,
    code: 400,
    description: "wrong last sequence: 8",
  });

describe("appendBatch", () => {
  it("retries, instead of standing down, when the refusal cannot be checked against the stream", async () => {
    const data = new TextEncoder().encode('{"ours":true}');
    const other = new TextEncoder().encode('{"theirs":true}');
    const stored = { seq: 7, data: other }; // the seal stream's last message, as it is read
    const publish = vi
      .fn()
      .mockImplementationOnce(() => {
        stored.seq = 8; // stored, but the answer is lost
        stored.data = data;
        return Promise.reject(new Error("TIMEOUT"));
      })
      .mockImplementation(() => Promise.reject(wrongLast()));
    let reads = 0;
    const info = () => {
      reads++;
      // The first read after the timeout still shows seq 7 (not ours); the second fails.
      if (reads === 1) return Promise.resolve({ state: { messages: 7, last_seq: 7 } });
      if (reads === 2) return Promise.reject(new Error("TIMEOUT"));
      return Promise.resolve({ state: { messages: stored.seq, last_seq: stored.seq } });
    };
    const getMessage = (_: string, q: { seq: number }) =>
      Promise.resolve({
        seq: q.seq,
        data: q.seq === 8 ? stored.data : other,
        header: undefined,
        time: new Date(),
      });
    const bus = {
      subjects,
      js: { publish },
      jsm: { streams: { info, getMessage } },
    } as unknown as Bus;
    const logger = pino({ level: "silent" });
    const warn = vi.spyOn(logger, "warn");
    const target: AppendTarget = {
      bus,
      key: { sign: () => "sig", publicKey: "PK" },
      lease: { held: () => true } as unknown as SealerLease,
      logger,
      stopping: () => false,
    };
    expect(await appendBatch(target, data, { streamSeq: 7 })).toBe(8);
    expect(publish).toHaveBeenCalledTimes(3);
    const messages = warn.mock.calls.map((call) => String(call[1]));
    expect(messages.some((m) => m.includes("could not be read"))).toBe(true);
  });
});
