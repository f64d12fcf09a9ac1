/**
 * The stop list follower fails closed when what it knows is stale or unknown, and only then: a
 * read that times out (a NATS node moving away) leaves the last good read standing until it is
 * stale; a stored value that is not a stop list makes the list unreadable at once.
 */
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HookbusError } from "../../../src/foundation/errors.js";
import { StopList, StopListFollower, type StopStore } from "../../../src/registry/stops.js";

function storeReading(...reads: (() => Promise<StopList>)[]): StopStore {
  let next = 0;
  return { current: () => reads[Math.min(next++, reads.length - 1)]!() } as unknown as StopStore;
}

const list = () => Promise.resolve(new StopList(3, []));
const timeout = () => Promise.reject(new Error("timeout"));
const malformed = () =>
  Promise.reject(new HookbusError("HOOKBUS_INVALID_STOP", "stop list revision 4: not valid"));

afterEach(() => {
  vi.useRealTimers();
});

describe("StopListFollower", () => {
  it("keeps the last good read through a failed read until it is stale", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const follower = new StopListFollower(storeReading(list, timeout), pino({ level: "silent" }), {
      checkMs: 250,
      staleAfterMs: 2000,
    });
    expect((await follower.start()).readable).toBe(true);
    await vi.advanceTimersByTimeAsync(1000); // reads now fail
    expect(follower.state()).toMatchObject({ readable: true, list: { revision: 3 } });
    await vi.advanceTimersByTimeAsync(1100);
    const stale = follower.state();
    expect(stale.readable).toBe(false);
    expect(stale.readable === false && stale.why).toMatch(/^timeout \(last read \d+ ms ago\)$/);
    follower.stop();
  });

  it("is unreadable at once when the stored value is not a stop list", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const follower = new StopListFollower(
      storeReading(list, malformed),
      pino({ level: "silent" }),
      { checkMs: 250, staleAfterMs: 2000 },
    );
    await follower.start();
    await vi.advanceTimersByTimeAsync(250);
    const state = follower.state();
    expect(state.readable).toBe(false);
    expect(state.readable === false && state.why).toMatch(/not valid/);
    follower.stop();
  });

  it("is unreadable before its first good read", async () => {
    const follower = new StopListFollower(storeReading(timeout), pino({ level: "silent" }));
    expect(await follower.start()).toMatchObject({ readable: false, why: "timeout" });
    follower.stop();
  });
});
