/**
 * Where a sealer starts its first chain (no batch yet): the log's first sequence. A failure to
 * read the log stream fails the round instead of guessing sequence 1, which would seal a range
 * the log no longer has; only "no log stream" means 1.
 */
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { Bus } from "../../../src/bus/bus.js";
import { Subjects } from "../../../src/bus/subjects.js";
import type { SessionHeads } from "../../../src/sealer/heads.js";
import { loadSealState } from "../../../src/sealer/seal-state.js";

const subjects = new Subjects("sealstate");
const heads = { forget: () => {} } as unknown as SessionHeads;
const logger = pino({ level: "silent" });

/** A bus whose seal stream is empty and whose log stream answers with `logInfo`. */
function busWith(logInfo: () => Promise<unknown>): Bus {
  const info = (name: string) =>
    name === subjects.logStream
      ? logInfo()
      : Promise.resolve({ state: { messages: 0, last_seq: 7 } });
  return { subjects, jsm: { streams: { info } } } as unknown as Bus;
}

const notFound = () =>
  new JetStreamApiError({
    err_code: JetStreamApiCodes.StreamNotFound,
    code: 404,
    description: "stream not found",
  });

describe("loadSealState without a batch", () => {
  it("starts at the log's first sequence", async () => {
    const bus = busWith(() => Promise.resolve({ state: { first_seq: 1200, last_seq: 1300 } }));
    expect(await loadSealState(bus, heads, logger)).toEqual({
      index: 0,
      hash: null,
      nextSeq: 1200,
      streamSeq: 7,
    });
  });

  it("starts at 1 when there is no log stream yet", async () => {
    const bus = busWith(() => Promise.reject(notFound()));
    expect((await loadSealState(bus, heads, logger)).nextSeq).toBe(1);
  });

  it("fails (so the round is retried) when the log stream cannot be read", async () => {
    const timeout = new Error("TIMEOUT");
    const bus = busWith(() => Promise.reject(timeout));
    await expect(loadSealState(bus, heads, logger)).rejects.toBe(timeout);
  });
});
