/**
 * A request that survives a dropped connection: nats.js neither fails nor re-sends requests in
 * flight when its connection drops, so one `nc.request` given the whole deadline waits it out
 * although the server may be back within a second. Here each attempt gets a bounded window of the
 * remaining time, the request is re-sent at once when the connection comes back, and again when
 * an attempt's window ends (its responder may have died with the request), always with the same
 * body and ids: the responder's de-duplication makes a re-sent request safe.
 */
import {
  ClosedConnectionError,
  DrainingConnectionError,
  RequestError,
  TimeoutError,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from "@nats-io/transport-node";
import type { Logger } from "pino";
import { ConnectionWatch } from "../bus/connection-watch.js";
import { Header } from "../bus/headers.js";
import { ReplyInbox } from "../bus/reply-inbox.js";
import { HookbusError, type ErrorCode } from "../foundation/errors.js";
import { sleep } from "../foundation/time.js";
import { MIN_ATTEMPT_MS, pauseBeforeRetry } from "../foundation/deadline.js";

/** Error replies that mean "not now, try another responder": re-sent within the deadline. */
const RETRY_CODES = new Set<string>(["HOOKBUS_OVERLOADED"]);

/** The first attempt's window; each later one doubles it, so a slow answer is asked for rarely. */
export const FIRST_ATTEMPT_MS = 1000;

export interface ResendRequest {
  subject: string;
  data: Uint8Array;
  /** The headers of one attempt, given the milliseconds left before the deadline. */
  headers: (remainingMs: number) => MsgHdrs;
  /** Epoch milliseconds: no attempt runs past it. */
  deadline: number;
  /** Names the request in errors, e.g. `before_tool_call call 42`. */
  what: string;
  details?: Record<string, unknown>;
  /** Nobody answered in time although the connection was up. Default HOOKBUS_CALL_TIMEOUT. */
  timeoutCode?: ErrorCode;
  /** Nobody could be reached: no responders, or the connection was down. Default HOOKBUS_COORDINATOR_UNAVAILABLE. */
  unavailableCode?: ErrorCode;
  /** Appended to the "nobody answered" message, e.g. which responders were expected. */
  hint?: string;
  /** The first attempt's window (tests shorten it). */
  firstAttemptMs?: number;
  logger?: Logger;
}

type AttemptResult =
  { kind: "reply"; msg: Msg } | { kind: "error"; error: unknown } | { kind: "reconnected" };

export async function requestWithResend(nc: NatsConnection, request: ResendRequest): Promise<Msg> {
  const { subject, deadline, what } = request;
  const details = request.details ?? {};
  const watch = ConnectionWatch.of(nc);
  const started = Date.now();
  let window = request.firstAttemptMs ?? FIRST_ATTEMPT_MS;
  let retries = 0;
  let attempts = 0;
  let lastError: unknown;
  /** Attempts the server answered with "no responders". */
  let noResponders = 0;
  // Whether the connection dropped at any point: a deadline passed then is "unavailable".
  const dropsBefore = watch.disconnects;

  const unavailable = (why: string, cause?: unknown) =>
    new HookbusError(
      request.unavailableCode ?? "HOOKBUS_COORDINATOR_UNAVAILABLE",
      `${what}: ${why} (${attempts} attempts over ${Date.now() - started} ms)${request.hint ?? ""}`,
      { ...details, subject, attempts },
      cause,
    );

  for (let attempt = 0; ; attempt++) {
    const remaining = Math.floor(deadline - Date.now());
    if (remaining < 1) {
      if (!watch.connected || watch.disconnects !== dropsBefore) {
        throw unavailable("the NATS connection was down and the deadline passed", lastError);
      }
      // The server said no one listens, and no one answered since: unavailable, not slow (on a
      // loaded machine the last attempt's "no responders" can come after its window closed).
      if (noResponders > 0) {
        throw unavailable(`nobody answered on ${subject} before the deadline`, lastError);
      }
      throw new HookbusError(
        request.timeoutCode ?? "HOOKBUS_CALL_TIMEOUT",
        `${what}: no answer before the deadline`,
        details,
        lastError,
      );
    }
    const timeout = Math.min(remaining, window);
    const reconnect = watch.nextReconnect();
    attempts++;
    // The connection's shared inbox, not nc.request (see src/bus/reply-inbox.ts).
    const sent = ReplyInbox.of(nc).request(subject, request.data, {
      timeout,
      headers: request.headers(remaining),
    });
    let result: AttemptResult;
    try {
      result = await Promise.race([
        sent.then(
          (msg): AttemptResult => ({ kind: "reply", msg }),
          (error: unknown): AttemptResult => ({ kind: "error", error }),
        ),
        reconnect.promise.then((): AttemptResult => ({ kind: "reconnected" })),
      ]);
    } finally {
      reconnect.cancel();
    }
    if (result.kind === "reply") {
      const code = result.msg.headers?.get(Header.ErrorCode) ?? "";
      if (!RETRY_CODES.has(code)) return result.msg;
      // That responder is full: another of its queue group may have room. The last such
      // answer is the caller's if the deadline leaves no room for one more attempt.
      const pause = pauseBeforeRetry(retries++, deadline);
      if (pause === undefined || deadline - Date.now() - pause < MIN_ATTEMPT_MS) return result.msg;
      await sleep(pause);
      continue;
    }
    if (result.kind === "reconnected") {
      // The request may have been lost with the old connection: send it again now.
      sent.catch(() => {});
      request.logger?.debug({ subject, attempt }, "reconnected; re-sending");
      continue;
    }
    const { error } = result;
    lastError = error;
    if (error instanceof HookbusError) throw error;
    if (error instanceof ClosedConnectionError || error instanceof DrainingConnectionError) {
      throw unavailable("the NATS connection is closed", error);
    }
    if (error instanceof TimeoutError) {
      // The window ended: the responder may have died with the request. Ask again, for longer.
      window *= 2;
      continue;
    }
    if (!(error instanceof RequestError)) {
      throw new HookbusError(
        "HOOKBUS_INTERNAL",
        `${what}: request failed: ${String(error)}`,
        details,
        error,
      );
    }
    // No responders (restarting, or none deployed): retry while the deadline allows.
    noResponders++;
    const pause = pauseBeforeRetry(retries++, deadline);
    if (pause === undefined || deadline - Date.now() - pause < MIN_ATTEMPT_MS) {
      throw unavailable(
        `nobody answered on ${subject}` + (watch.connected ? "" : " (the NATS connection is down)"),
        error,
      );
    }
    request.logger?.debug({ subject, attempt, err: error }, "no responder yet; retrying");
    await sleep(pause);
  }
}
