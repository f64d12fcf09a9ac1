import { describe, expect, it } from "vitest";
import { InFlight } from "../../../src/worker/in-flight.js";

describe("InFlight", () => {
  it("runs at most `limit` tasks at once and idle() waits for all of them, including queued ones", async () => {
    const inFlight = new InFlight(2);
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    for (let i = 0; i < 6; i++) {
      void inFlight.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        done.push(i);
      });
    }
    expect(inFlight.size).toBe(6);
    await inFlight.idle();
    expect(peak).toBe(2);
    expect(done.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(inFlight.size).toBe(0);
  });

  it("frees the slot of a failing task", async () => {
    const inFlight = new InFlight(1);
    await inFlight.run(() => Promise.reject(new Error("x")));
    let ran = false;
    await inFlight.run(() => Promise.resolve(void (ran = true)));
    await inFlight.idle();
    expect(ran).toBe(true);
  });

  it("frees the slot of a task that throws before its first await", async () => {
    const inFlight = new InFlight(1);
    await inFlight.run(() => {
      throw new Error("at once");
    });
    await inFlight.idle();
    expect(inFlight.size).toBe(0);
    let ran = false;
    await inFlight.run(() => Promise.resolve(void (ran = true)));
    expect(ran).toBe(true);
  });

  it("idle() also waits for a task accepted while it waits", async () => {
    const inFlight = new InFlight(1);
    let release!: () => void;
    void inFlight.run(() => new Promise<void>((r) => (release = r)));
    const idle = inFlight.idle();
    let secondDone = false;
    void inFlight.run(async () => {
      await new Promise((r) => setTimeout(r, 5));
      secondDone = true;
    });
    release();
    await idle;
    expect(secondDone).toBe(true);
  });

  it("refuses a limit below 1", () => {
    expect(() => new InFlight(0)).toThrow(RangeError);
  });
});
