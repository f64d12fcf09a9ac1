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

  it("waits for a fresh read of a stale list instead of failing closed (issue 32, item 1)", async () => {
    let fail = false;
    let reads = 0;
    const store = {
      current: () => {
        reads++;
        return fail ? timeout() : list();
      },
    } as unknown as StopStore;
    const follower = new StopListFollower(store, pino({ level: "silent" }), {
      checkMs: 60_000,
      staleAfterMs: 100,
    });
    await follower.start();
    fail = true;
    await new Promise((r) => setTimeout(r, 150));
    expect(follower.state()).toMatchObject({ readable: false, waitable: true });
    fail = false;
    const t0 = Date.now();
    const state = await follower.fresh(Date.now() + 1000);
    expect(state).toMatchObject({ readable: true, list: { revision: 3 } });
    expect(Date.now() - t0).toBeLessThan(500);
    expect(reads).toBe(2);
    follower.stop();
  });

  it("fails closed only at the deadline when no read succeeds, and never waits out a malformed value", async () => {
    const follower = new StopListFollower(storeReading(timeout), pino({ level: "silent" }), {
      checkMs: 60_000,
    });
    await follower.start();
    const t0 = Date.now();
    const state = await follower.fresh(Date.now() + 300);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(state).toMatchObject({ readable: false, why: "timeout", waitable: true });

    const bad = new StopListFollower(storeReading(malformed), pino({ level: "silent" }));
    await bad.start();
    const t1 = Date.now();
    expect(await bad.fresh(Date.now() + 5000)).toMatchObject({ readable: false, waitable: false });
    expect(Date.now() - t1).toBeLessThan(100);
    follower.stop();
    bad.stop();
  });

  it("after a reconnect trusts no earlier read, and re-reads at once beside a read that hangs", async () => {
    let hang = false;
    const hung: ((revision: number) => void)[] = [];
    const store = {
      current: () =>
        hang
          ? new Promise<StopList>((resolve) =>
              hung.push((revision) => resolve(new StopList(revision, []))),
            )
          : list(),
    } as unknown as StopStore;
    const follower = new StopListFollower(store, pino({ level: "silent" }), { checkMs: 60_000 });
    await follower.start();
    hang = true;
    follower.reconnected(); // this read hangs (the connection went away again)
    await new Promise((r) => setTimeout(r, 5));
    follower.reconnected();
    expect(follower.state()).toMatchObject({ readable: false, waitable: true });
    expect(hung.length).toBe(2); // started at once, not behind the hung one
    hung[1]!(2);
    const state = await follower.fresh(Date.now() + 1000);
    expect(state).toMatchObject({ readable: true, list: { revision: 2 } });
    // The older read ends late: it does not replace what the newer one read.
    hung[0]!(9);
    await new Promise((r) => setTimeout(r, 5));
    expect(follower.state()).toMatchObject({ readable: true, list: { revision: 2 } });
    follower.stop();
  });
});
