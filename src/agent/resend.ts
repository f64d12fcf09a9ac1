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
  type NatsConnection,
} from "@nats-io/transport-node";
import type { Logger } from "pino";
import { ConnectionWatch } from "../bus/connection-watch.js";
import type { RequestWire } from "../bus/body-deadline.js";
import { Header } from "../bus/headers.js";
import { ReplyInbox } from "../bus/reply-inbox.js";
import { HookbusError, type ErrorCode } from "../foundation/errors.js";
import { sleep } from "../foundation/time.js";
import { pauseBeforeRetry } from "../foundation/deadline.js";

/** Error replies that mean "not now, try another responder": re-sent within the deadline. */
const RETRY_CODES = new Set<string>(["HOOKBUS_OVERLOADED"]);

/** The first attempt's window; each later one doubles it, so a slow answer is asked for rarely. */
export const FIRST_ATTEMPT_MS = 1000;

export interface ResendRequest {
  subject: string;
  /** What one attempt sends (its body, headers if any), given the milliseconds left before the deadline. */
  wire: (remainingMs: number) => RequestWire;
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

/** How an attempt ended: its reply, its failure, or the connection came back first. */
type AttemptResult = Msg | AttemptFailed | typeof RECONNECTED;

class AttemptFailed {
  constructor(readonly error: unknown) {}
}

const RECONNECTED = Symbol("reconnected");

/** Send the request again at once (the connection came back, or an attempt's window ended). */
const AT_ONCE = -1;

/**
 * One attempt: the request on the connection's shared inbox (not nc.request, see
 * src/bus/reply-inbox.ts), raced against the connection's next reconnect. One promise per
 * attempt, not a Promise.race of three (this is on every agent call).
 */
function attempt(
  nc: NatsConnection,
  watch: ConnectionWatch,
  request: ResendRequest,
  remaining: number,
  timeout: number,
): Promise<AttemptResult> {
  const { data, headers } = request.wire(remaining);
  const sent = ReplyInbox.of(nc).request(
    request.subject,
    data,
    headers === undefined ? { timeout } : { timeout, headers },
  );
  return new Promise<AttemptResult>((resolve) => {
    const wake = () => resolve(RECONNECTED);
    watch.wakeAtReconnect(wake);
    // Settles after a reconnect too (then the attempt is over and this changes nothing).
    sent.then(
      (msg) => {
        watch.forget(wake);
        resolve(msg);
      },
      (error: unknown) => {
        watch.forget(wake);
        resolve(new AttemptFailed(error));
      },
    );
  });
}

/** A request's attempts so far, and what its errors say about them. */
class Attempts {
  readonly started = Date.now();
  /** Whether the connection dropped at any point: a deadline passed then is "unavailable". */
  readonly dropsBefore: number;
  window: number;
  retries = 0;
  count = 0;
  lastError: unknown;
  /** Attempts the server answered with "no responders". */
  noResponders = 0;

  constructor(
    readonly request: ResendRequest,
    readonly watch: ConnectionWatch,
  ) {
    this.dropsBefore = watch.disconnects;
    this.window = request.firstAttemptMs ?? FIRST_ATTEMPT_MS;
  }

  unavailable(why: string, cause?: unknown): HookbusError {
    const { request } = this;
    return new HookbusError(
      request.unavailableCode ?? "HOOKBUS_COORDINATOR_UNAVAILABLE",
      `${request.what}: ${why} (${this.count} attempts over ${Date.now() - this.started} ms)${request.hint ?? ""}`,
      { ...(request.details ?? {}), subject: request.subject, attempts: this.count },
      cause,
    );
  }

  /** The deadline passed with no answer: unavailable when the connection dropped, else a timeout. */
  deadlinePassed(): HookbusError {
    const { request, watch } = this;
    if (!watch.connected || watch.disconnects !== this.dropsBefore) {
      return this.unavailable(
        "the NATS connection was down and the deadline passed",
        this.lastError,
      );
    }
    // The server said no one listens, and no one answered since: unavailable, not slow (on a
    // loaded machine the last attempt's "no responders" can come after its window closed).
    if (this.noResponders > 0) {
      return this.unavailable(
        `nobody answered on ${request.subject} before the deadline`,
        this.lastError,
      );
    }
    return new HookbusError(
      request.timeoutCode ?? "HOOKBUS_CALL_TIMEOUT",
      `${request.what}: no answer before the deadline`,
      request.details ?? {},
      this.lastError,
    );
  }

  /**
   * A reply is the caller's, unless its responder is full: another of its queue group may have
   * room, so the pause before the next attempt. The last such answer is the caller's if the
   * deadline leaves no room for one more attempt.
   */
  afterReply(msg: Msg): Msg | number {
    const code = msg.headers?.get(Header.ErrorCode) ?? "";
    if (!RETRY_CODES.has(code)) return msg;
    const { deadline } = this.request;
    // pauseBeforeRetry already leaves MIN_ATTEMPT_MS for the next attempt; checking again here
    // with a later clock gave up early whenever the pause was clamped to the room left.
    const pause = pauseBeforeRetry(this.retries++, deadline);
    return pause === undefined ? msg : pause;
  }

  /** A failed attempt: the pause before the next one (AT_ONCE: none), or the error to throw. */
  afterError(error: unknown): number {
    const { request } = this;
    this.lastError = error;
    if (error instanceof HookbusError) throw error;
    if (error instanceof ClosedConnectionError || error instanceof DrainingConnectionError) {
      throw this.unavailable("the NATS connection is closed", error);
    }
    if (error instanceof TimeoutError) {
      // The window ended: the responder may have died with the request. Ask again, for longer.
      this.window *= 2;
      return AT_ONCE;
    }
    if (!(error instanceof RequestError)) {
      throw new HookbusError(
        "HOOKBUS_INTERNAL",
        `${request.what}: request failed: ${String(error)}`,
        request.details ?? {},
        error,
      );
    }
    // No responders (restarting, or none deployed): retry while the deadline allows.
    this.noResponders++;
    const pause = pauseBeforeRetry(this.retries++, request.deadline);
    if (pause === undefined) {
      throw this.unavailable(
        `nobody answered on ${request.subject}` +
          (this.watch.connected ? "" : " (the NATS connection is down)"),
        error,
      );
    }
    request.logger?.debug(
      { subject: request.subject, attempt: this.count - 1, err: error },
      "no responder yet; retrying",
    );
    return pause;
  }

  /** The request may have been lost with the old connection: send it again now. */
  afterReconnect(): number {
    this.request.logger?.debug(
      { subject: this.request.subject, attempt: this.count - 1 },
      "reconnected; re-sending",
    );
    return AT_ONCE;
  }
}

export async function requestWithResend(nc: NatsConnection, request: ResendRequest): Promise<Msg> {
  const attempts = new Attempts(request, ConnectionWatch.of(nc));
  for (;;) {
    const remaining = Math.floor(request.deadline - Date.now());
    if (remaining < 1) throw attempts.deadlinePassed();
    attempts.count++;
    const result = await attempt(
      nc,
      attempts.watch,
      request,
      remaining,
      Math.min(remaining, attempts.window),
    );
    let pause: number;
    if (result === RECONNECTED) pause = attempts.afterReconnect();
    else if (result instanceof AttemptFailed) pause = attempts.afterError(result.error);
    else {
      const answered = attempts.afterReply(result);
      if (typeof answered !== "number") return answered;
      pause = answered;
    }
    if (pause !== AT_ONCE) await sleep(pause);
  }
}
