/**
 * A service's start may meet a JetStream that is briefly unable to answer (a node of a cluster
 * killed and its streams' leaders being re-elected, a server still recovering its store): a
 * timeout or "no responders" there is not a reason to exit. Such failures are retried with
 * backoff until the `--connect-wait` deadline; any other failure (bad input, permissions) at once.
 */
import { JetStreamApiError } from "@nats-io/jetstream";
import { NoRespondersError, RequestError, TimeoutError } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { retryWithBackoff } from "../foundation/backoff.js";

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 2_000;

/** A failure that says JetStream did not answer (yet), through any chain of causes. */
export function isTransientJetStreamFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    if (e instanceof TimeoutError || e instanceof NoRespondersError || e instanceof RequestError)
      return true;
    // 503: "JetStream system temporarily unavailable" while a leader is elected.
    if (e instanceof JetStreamApiError && e.status === 503) return true;
    e = e.cause;
  }
  return false;
}

export async function startWithRetry<T>(
  start: () => Promise<T>,
  retry: {
    waitMs: number;
    logger: Logger;
    what: string;
    /** Default isTransientJetStreamFailure; a service adds its own passing failures. */
    retryable?: (error: unknown) => boolean;
  },
): Promise<T> {
  return retryWithBackoff(start, {
    waitMs: retry.waitMs,
    firstMs: FIRST_BACKOFF_MS,
    capMs: MAX_BACKOFF_MS,
    retryable: retry.retryable ?? isTransientJetStreamFailure,
    onRetry: (error, next) =>
      retry.logger.warn(
        { err: error, ...next },
        `${retry.what}: JetStream did not answer, retrying`,
      ),
  });
}
