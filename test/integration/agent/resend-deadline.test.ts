/**
 * requestWithResend against a real NATS server where nobody listens: it retries with jittered
 * pauses and gives up only when no attempt fits before the deadline. A clamped last pause once
 * made it give up ~100 ms early whenever the clock moved between two readings, as it does on a
 * loaded machine; here every reading of the clock moves it by a millisecond.
 */
import { connect, headers, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { requestWithResend } from "../../../src/agent/resend.js";
import { MIN_ATTEMPT_MS } from "../../../src/foundation/deadline.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { findNatsServer, type NatsServerHandle } from "../../../src/testing/nats.js";
import { uniqueNamespace } from "../../support/nats.js";
import { rejection } from "../../support/wait.js";

let server: NatsServerHandle;
let nc: NatsConnection;

beforeAll(async () => {
  server = await findNatsServer();
  nc = await connect({ servers: server.url });
});

afterAll(async () => {
  await nc?.drain();
  await server?.stop();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A busy machine: time passes between any two readings of the clock. */
function clockThatMovesWhenRead(): void {
  const realNow = Date.now.bind(Date);
  let skew = 0;
  vi.spyOn(Date, "now").mockImplementation(() => realNow() + ++skew);
}

describe("requestWithResend with no responders", () => {
  it("keeps retrying until less than one attempt's room is left before the deadline", async () => {
    clockThatMovesWhenRead();
    const budgetMs = 300;
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        const started = Date.now();
        const error = await rejection(
          requestWithResend(nc, {
            subject: `${uniqueNamespace("resend")}.nobody.${i}`,
            wire: () => ({ data: new Uint8Array(), headers: headers() }),
            deadline: started + budgetMs,
            what: `request ${i}`,
            unavailableCode: "HOOKBUS_LOG_UNAVAILABLE",
          }),
        );
        return { error, elapsed: Date.now() - started };
      }),
    );
    for (const { error, elapsed } of outcomes) {
      expect(isHookbusError(error, "HOOKBUS_LOG_UNAVAILABLE")).toBe(true);
      expect((error as { details: { attempts: number } }).details.attempts).toBeGreaterThan(2);
      expect(elapsed).toBeGreaterThanOrEqual(budgetMs - MIN_ATTEMPT_MS);
    }
  });
});
