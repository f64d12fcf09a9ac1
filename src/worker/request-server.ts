/**
 * Serves one policy's modifying hooks over NATS core request/reply. Every worker of the policy
 * subscribes `<ns>.policy.<policy>.*` in the queue group `<ns>-policy-<policy>`, so the server
 * hands each request to exactly one of them and N processes share the load. The client
 * re-subscribes by itself after a reconnect.
 *
 * Each request gets exactly one reply: a verdict (or none), or an error with a stable code in
 * the body and the `Hookbus-Error-Code` header. See docs/protocol.md.
 */
import type { Msg, Subscription } from "@nats-io/transport-node";
import { z } from "zod";
import type { Bus } from "../bus/bus.js";
import { optionalBodyHeaders, type EncodedBody } from "../bus/codec.js";
import type { PolicyReply } from "../bus/envelope.js";
import { Header } from "../bus/headers.js";
import { bodyTimeoutMs, headerTimeoutMs } from "../bus/body-deadline.js";
import { isHookName, isModifyingHook, type ModifyingHookName } from "../catalog/catalog.js";
import { HookbusError, isHookbusError } from "../foundation/errors.js";
import type { WorkerTelemetry } from "./telemetry.js";
import type { InFlight } from "./in-flight.js";
import { invokePolicyNow, type InvokeOptions } from "../policy/invoke.js";
import type { Policy } from "../policy/policy.js";
import type { CallFacts } from "../policy/call-facts.js";
import { FACTS_VERSION } from "../facts/index.js";
import type { SessionStateStore } from "../policy/state/session-state.js";
import type { Logger } from "pino";
import { isPromise, type MaybePromise } from "../foundation/hot-path.js";

export interface RequestServerOptions {
  bus: Bus;
  policy: Policy;
  state: SessionStateStore;
  inFlight: InFlight;
  /** Aborted when the runner gives up waiting for handlers (a second signal). */
  hardStop: AbortSignal;
  /** Handler metrics and spans (src/observability). */
  telemetry?: WorkerTelemetry;
  /** Requests waiting for a free handler beyond which new ones are refused (HOOKBUS_WORKER_OVERLOADED). */
  maxQueued: number;
}

/** The envelope fields the worker needs to route a request; event and context are the handler's. */
const Envelope = z.looseObject({
  callId: z.string().min(1),
  hook: z.string(),
  /** Absent when one body is shared by every policy of the call (the subject names the policy). */
  policy: z.string().optional(),
});

/**
 * What `Envelope` accepts, checked by hand on every request (zod's parse allocates its result and
 * issues); zod runs only for a body that fails, for its message. Kept equal by
 * test/unit/worker/envelope.test.ts.
 */
export function isEnvelope(value: unknown): value is z.infer<typeof Envelope> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { callId, hook, policy } = value as Record<string, unknown>;
  return (
    typeof callId === "string" &&
    callId.length > 0 &&
    typeof hook === "string" &&
    (policy === undefined || typeof policy === "string")
  );
}

/** A body that is not an envelope: zod's account of why. */
export function parseEnvelope(value: unknown, policy: string): z.infer<typeof Envelope> {
  const parsed = Envelope.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new HookbusError(
    "HOOKBUS_BAD_MESSAGE",
    `not a PolicyRequest: ${z.prettifyError(parsed.error)}`,
    { policy },
  );
}

/**
 * The request's facts when they are of the version this SDK reads (the coordinator computed
 * them; only coordinators may publish policy requests); otherwise the handler sees none.
 */
function factsOf(value: unknown): CallFacts | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const facts = value as Partial<CallFacts>;
  return facts.version === FACTS_VERSION && Array.isArray(facts.tools)
    ? (facts as CallFacts)
    : undefined;
}

/** A reply naming the policy (and its version): its verdict or error is added to it. */
function replyOf(policy: Policy): PolicyReply {
  // One literal per case, not a spread of an optional part (hot path: foundation/hot-path.ts).
  return policy.version === undefined
    ? { policy: policy.name }
    : { policy: policy.name, version: policy.version };
}

/**
 * One request's options for invokePolicy, its signal built only when the handler reads it: a
 * timer and two signals per request are measurable overhead for the many policies that never
 * look. One object per request holds the deadline too, not a closure and its context beside it
 * (bench/worker-cost.ts). A class, not an object literal with a getter (foundation/hot-path.ts).
 */
class RequestInvokeOptions implements InvokeOptions {
  #signal: AbortSignal | undefined;
  // Held here on purpose: AbortSignal.any() references its sources weakly, and a timeout signal
  // nobody else references can be collected before it fires.
  #timeoutSignal: AbortSignal | undefined;

  constructor(
    readonly callId: string,
    readonly state: SessionStateStore,
    /** Epoch ms when the caller stops waiting; undefined: the request named no timeout. */
    readonly deadline: number | undefined,
    readonly logger: Logger,
    readonly facts: CallFacts | undefined,
    private readonly hardStop: AbortSignal,
    /** The request's timeout and when it arrived (performance.now()), for the timer. */
    private readonly timeoutMs: number,
    private readonly receivedAt: number,
  ) {}

  /** The caller stops waiting at its deadline; the handler is told so it can stop working too. */
  get signal(): AbortSignal {
    if (this.#signal !== undefined) return this.#signal;
    if (this.deadline === undefined) return (this.#signal = this.hardStop);
    const remaining = Math.max(
      0,
      Math.round(this.timeoutMs - (performance.now() - this.receivedAt)),
    );
    this.#timeoutSignal = AbortSignal.timeout(remaining);
    return (this.#signal = AbortSignal.any([this.hardStop, this.#timeoutSignal]));
  }

  /** The handler read its signal and the caller's deadline has passed since. */
  get deadlinePassed(): boolean {
    return this.#timeoutSignal?.aborted === true;
  }
}

/** Epoch ms when the caller stops waiting, from its timeout and the request's arrival. */
function deadlineOf(timeoutMs: number | undefined, receivedAt: number): number | undefined {
  return timeoutMs === undefined
    ? undefined
    : Date.now() + (timeoutMs - (performance.now() - receivedAt));
}

/** A request's envelope whose hook is the modifying hook of its subject. */
type CheckedRequest = z.infer<typeof Envelope> & { hook: ModifyingHookName };

export class RequestServer {
  private subscription: Subscription | undefined;
  private readonly prefix: string;
  private stopped = false;
  /**
   * Reply subjects of the requests this worker holds (queued or running). The coordinator asks
   * a policy again, with the same reply subject, when no verdict came by half its timeout (its
   * worker may have vanished: docs/policy-workers.md); when the second ask lands on the worker
   * still holding the first, it is dropped here, so a slow handler never runs twice for one ask.
   * Bounded by the queue: one entry per held request.
   */
  private readonly holding = new Set<string>();
  /**
   * The reply "no opinion" (the policy, its version, nothing else), encoded once: it is the same
   * bytes for every request the policy has no opinion on, the most common answer, and encoding
   * it per request was a JSON.stringify and a Buffer each time (bench/worker-cost.ts).
   */
  private readonly noOpinion: EncodedBody | undefined;

  constructor(private readonly options: RequestServerOptions) {
    const { bus, policy } = options;
    this.prefix = `${bus.subjects.namespace}.policy.${policy.name}.`;
    // By the codec's own rules; a body it would gzip or store is encoded per request instead.
    const noOpinion = bus.codec.encodeNow(replyOf(policy));
    this.noOpinion = isPromise(noOpinion) ? undefined : noOpinion;
    this.subscription = this.subscribe();
  }

  private subscribe(): Subscription {
    const { bus, policy, inFlight } = this.options;
    return bus.nc.subscribe(bus.subjects.policyWildcard(policy.name), {
      queue: bus.subjects.policyQueue(policy.name),
      callback: (error, msg) => {
        if (error !== null) {
          bus.logger.error({ err: error, policy: policy.name }, "policy subscription failed");
          return;
        }
        // Stamped here, not when a handler is free: the caller's deadline runs from now.
        const arrivedAt = performance.now();
        const reply = msg.reply;
        if (reply !== undefined && this.holding.has(reply)) return; // asked again: held already
        if (inFlight.queued >= this.options.maxQueued) {
          void this.refuse(msg, "its queue is full");
          return;
        }
        if (reply !== undefined) this.holding.add(reply);
        const answer = () => this.answer(msg, arrivedAt);
        void inFlight.run(async () => {
          try {
            await (this.options.telemetry?.handle(policy.name, msg, answer) ?? answer());
          } finally {
            if (reply !== undefined) this.holding.delete(reply);
          }
        });
      },
    });
  }

  /** Stop taking requests; those already received are still handed to `inFlight`. */
  async drain(): Promise<void> {
    this.stopped = true;
    await this.pause();
  }

  /**
   * Stop taking requests for a while (the connection is moving to another NATS node): the queue
   * group's other members get them meanwhile; those already received are still handed to
   * `inFlight`.
   */
  async pause(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    // Best effort: a closed connection has nothing to drain.
    await subscription?.drain().catch((error: unknown) => {
      this.options.bus.logger.debug({ err: error }, "request subscription did not drain");
    });
  }

  /** Take requests again after `pause` (not after `drain`). */
  resume(): void {
    if (this.stopped || this.subscription !== undefined) return;
    this.subscription = this.subscribe();
  }

  /** Answer at once with HOOKBUS_WORKER_OVERLOADED: the coordinator applies the failure mode. */
  private async refuse(msg: Msg, why: string): Promise<void> {
    const { policy } = this.options;
    const failure = new HookbusError(
      "HOOKBUS_WORKER_OVERLOADED",
      `worker of "${policy.name}" refused the request: ${why}`,
      { policy: policy.name },
    );
    const reply = replyOf(policy);
    reply.error = failure.toJSON();
    // Refused before its body is decoded: the call id is not known yet.
    await this.respond(msg, undefined, reply, failure.code);
  }

  /** Resolves to the error code of the reply (undefined: a verdict, no opinion, or dropped). */
  private async answer(msg: Msg, receivedAt: number): Promise<string | undefined> {
    const { bus, policy, state } = this.options;
    // `msg.headers` is undefined, and nothing is decoded, for a plain JSON ask of a protocol 2
    // coordinator: its deadline is in its body. A gzip or blob body's is in the header.
    const headerMs = headerTimeoutMs(msg.headers);
    if (this.expiredInQueue(msg, headerMs, receivedAt)) return undefined;
    // Known once the body is read (requests carry it in the body only).
    let callId: string | undefined;
    let reply: PolicyReply;
    let errorCode: string | undefined;
    try {
      const read = this.readRequest(msg, deadlineOf(headerMs, receivedAt));
      const body = isPromise(read) ? await read : read;
      callId = body.callId;
      // The body's deadline when it names one, else the header's (coordinators before protocol 2).
      const bodyMs = body["timeoutMs"];
      const timeoutMs = bodyMs === undefined ? headerMs : bodyTimeoutMs(bodyMs);
      if (bodyMs !== undefined && this.expiredInQueue(msg, timeoutMs, receivedAt)) return undefined;
      const deadline = deadlineOf(timeoutMs, receivedAt);
      const options = new RequestInvokeOptions(
        callId,
        state,
        deadline,
        bus.logger,
        factsOf(body["facts"]),
        this.options.hardStop,
        timeoutMs ?? 0,
        receivedAt,
      );
      // Without a promise when the handler answers at once (most do): foundation/hot-path.ts.
      const invoked = invokePolicyNow(policy, body.hook, body["event"], body["context"], options);
      const result = isPromise(invoked) ? await invoked : invoked;
      if (result.error !== undefined && options.deadlinePassed) {
        // The handler stopped because the caller's deadline passed: an error now says nothing
        // the coordinator does not know (it recorded a timeout). A handler that ignores the
        // signal and returns a verdict late still sends it, to be recorded as a late verdict.
        bus.logger.debug({ policy: policy.name, callId }, "aborted at the deadline; no answer");
        return undefined;
      }
      reply = replyOf(policy);
      if (result.error !== undefined) {
        reply.error = result.error;
        errorCode = result.error.code;
      } else if (result.verdict !== undefined) {
        reply.verdict = result.verdict;
      }
    } catch (error) {
      const failure = isHookbusError(error)
        ? error
        : new HookbusError(
            "HOOKBUS_INTERNAL",
            `worker of "${policy.name}": ${String(error)}`,
            { policy: policy.name },
            error,
          );
      bus.logger.warn(
        { err: failure, policy: policy.name, subject: msg.subject },
        "cannot serve request",
      );
      reply = replyOf(policy);
      reply.error = failure.toJSON();
      errorCode = failure.code;
    }
    const sent = this.respond(msg, callId, reply, errorCode);
    if (isPromise(sent)) await sent;
    return errorCode;
  }

  /**
   * The caller has stopped waiting (the request waited for a free handler past its deadline):
   * running the handler now would only delay the next request, so it is dropped unanswered.
   */
  private expiredInQueue(msg: Msg, timeoutMs: number | undefined, receivedAt: number): boolean {
    if (timeoutMs === undefined) return false;
    const waited = performance.now() - receivedAt;
    if (waited < timeoutMs) return false;
    const { bus, policy } = this.options;
    bus.logger.debug(
      { policy: policy.name, subject: msg.subject, waitedMs: Math.round(waited) },
      "request expired in the queue; dropped",
    );
    return true;
  }

  /** Decode and check the envelope: it must be for this policy and the hook of its subject. */
  private readRequest(msg: Msg, deadline: number | undefined): MaybePromise<CheckedRequest> {
    const now = this.options.bus.codec.decodeMessageNow(
      msg,
      deadline === undefined ? {} : { deadline },
    );
    return isPromise(now)
      ? now.then((decoded) => this.checkRequest(msg, decoded))
      : this.checkRequest(msg, now);
  }

  private checkRequest(msg: Msg, decoded: unknown): CheckedRequest {
    const { policy } = this.options;
    const body = isEnvelope(decoded) ? decoded : parseEnvelope(decoded, policy.name);
    if (
      (body.policy !== undefined && body.policy !== policy.name) ||
      !this.isSubjectOf(msg.subject, body.hook)
    ) {
      throw new HookbusError(
        "HOOKBUS_BAD_MESSAGE",
        `request for policy "${body.policy ?? policy.name}" hook "${body.hook}" arrived on ${msg.subject}`,
        { policy: policy.name, hook: body.hook },
      );
    }
    if (!isHookName(body.hook)) {
      throw new HookbusError("HOOKBUS_UNKNOWN_HOOK", `unknown hook ${JSON.stringify(body.hook)}`, {
        hook: body.hook,
        policy: policy.name,
      });
    }
    if (!isModifyingHook(body.hook)) {
      throw new HookbusError(
        "HOOKBUS_NOT_MODIFYING_HOOK",
        `${body.hook} is observational: it is delivered from the log, not asked`,
        { hook: body.hook, policy: policy.name },
      );
    }
    return body as CheckedRequest;
  }

  /** `subject` is exactly this policy's prefix and `hook`, without building that string. */
  private isSubjectOf(subject: string, hook: string): boolean {
    return (
      subject.length === this.prefix.length + hook.length &&
      subject.startsWith(this.prefix) &&
      subject.endsWith(hook)
    );
  }

  /** Send the reply: at once, without a promise, when it is the policy's "no opinion". */
  private respond(
    msg: Msg,
    callId: string | undefined,
    reply: PolicyReply,
    errorCode: string | undefined,
  ): MaybePromise<void> {
    const noOpinion = this.noOpinion;
    const answersNothing = reply.verdict === undefined && reply.error === undefined;
    if (noOpinion !== undefined && answersNothing && errorCode === undefined) {
      this.send(msg, callId, noOpinion, undefined);
      return;
    }
    return this.encodeAndSend(msg, callId, reply, errorCode);
  }

  private async encodeAndSend(
    msg: Msg,
    callId: string | undefined,
    reply: PolicyReply,
    errorCode: string | undefined,
  ): Promise<void> {
    const { bus, policy } = this.options;
    // Only what the body does not say: the policy, its version and the call are in the body.
    const headers: Record<string, string> = {};
    let body = reply;
    if (errorCode !== undefined) headers[Header.ErrorCode] = errorCode;
    let encoded;
    try {
      const now = bus.codec.encodeNow(body);
      encoded = isPromise(now) ? await now : now;
    } catch (error) {
      // A verdict too large to send (and no blob store): answer with the reason instead.
      const failure = isHookbusError(error)
        ? error
        : new HookbusError(
            "HOOKBUS_INTERNAL",
            `cannot encode reply: ${String(error)}`,
            { policy: policy.name },
            error,
          );
      body = {
        policy: reply.policy,
        ...(reply.version === undefined ? {} : { version: reply.version }),
        error: failure.toJSON(),
      };
      headers[Header.ErrorCode] = failure.code;
      encoded = await bus.codec.encode(body);
    }
    this.send(msg, callId, encoded, headers);
  }

  private send(
    msg: Msg,
    callId: string | undefined,
    encoded: EncodedBody,
    headers: Record<string, string> | undefined,
  ): void {
    const { bus, policy } = this.options;
    try {
      const replyHeaders = optionalBodyHeaders(encoded, headers);
      const sent = msg.respond(
        encoded.data,
        replyHeaders === undefined ? undefined : { headers: replyHeaders },
      );
      if (!sent) {
        bus.logger.warn(
          { policy: policy.name, subject: msg.subject, callId },
          "request had no reply subject; answer dropped",
        );
      }
    } catch (error) {
      // Only a closed connection refuses a publish; the coordinator records a timeout.
      bus.logger.error({ err: error, policy: policy.name, callId }, "cannot send reply");
    }
  }
}
