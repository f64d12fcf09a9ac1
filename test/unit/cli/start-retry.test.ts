/**
 * Which start failures a service retries (JetStream not answering yet) and which it reports at
 * once (anything else), and that the retries stop at the deadline.
 */
import { JetStreamApiError } from "@nats-io/jetstream";
import { NoRespondersError, TimeoutError } from "@nats-io/transport-node";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { isTransientJetStreamFailure, startWithRetry } from "../../../src/cli/start-retry.js";
import { HookbusError } from "../../../src/foundation/errors.js";

const logger = pino({ level: "silent" });

describe("start retry", () => {
  it("treats timeouts, no responders and JetStream 503, also as a cause, as transient", () => {
    expect(isTransientJetStreamFailure(new TimeoutError())).toBe(true);
    expect(isTransientJetStreamFailure(new NoRespondersError("$JS.API.INFO"))).toBe(true);
    const unavailable = new JetStreamApiError({
      code: 503,
      err_code: 10008,
      description: "JetStream system temporarily unavailable",
    });
    expect(isTransientJetStreamFailure(unavailable)).toBe(true);
    const wrapped = new HookbusError("HOOKBUS_INTERNAL", "start failed", {}, new TimeoutError());
    expect(isTransientJetStreamFailure(wrapped)).toBe(true);
  });

  it("does not retry other failures", () => {
    const denied = new JetStreamApiError({ code: 403, err_code: 10003, description: "denied" });
    expect(isTransientJetStreamFailure(denied)).toBe(false);
    expect(isTransientJetStreamFailure(new HookbusError("HOOKBUS_INVALID_ARGUMENT", "bad"))).toBe(
      false,
    );
    expect(isTransientJetStreamFailure("timeout")).toBe(false);
  });

  it("retries a transient failure until it succeeds, and gives up on others at once", async () => {
    let calls = 0;
    const value = await startWithRetry(
      () => (++calls < 3 ? Promise.reject(new TimeoutError()) : Promise.resolve("up")),
      { waitMs: 30_000, logger, what: "test" },
    );
    expect(value).toBe("up");
    expect(calls).toBe(3);

    calls = 0;
    const bad = new HookbusError("HOOKBUS_INVALID_ARGUMENT", "bad");
    await expect(
      startWithRetry(
        () => {
          calls++;
          return Promise.reject(bad);
        },
        { waitMs: 30_000, logger, what: "test" },
      ),
    ).rejects.toBe(bad);
    expect(calls).toBe(1);
  });

  it("stops retrying at the deadline with the last failure", async () => {
    const timeout = new TimeoutError();
    await expect(
      startWithRetry(() => Promise.reject(timeout), { waitMs: 0, logger, what: "test" }),
    ).rejects.toBe(timeout);
  });
});
