/**
 * One policy, one hook, one input, in process: validate the event and context, run the handler,
 * validate its verdict. The NATS runner answers requests with it, and replay re-evaluates
 * recorded inputs with it, so a policy behaves the same live and in replay. It never throws:
 * every failure becomes a result with a stable error code, as it would cross the wire.
 */
import { pino, type Logger } from "pino";
import type { WireError } from "../bus/envelope.js";
import {
  isHookName,
  isModifyingHook,
  type HookName,
  type ModifyingHookName,
  type Verdict,
} from "../catalog/catalog.js";
import { parseContext, parseEvent, parseVerdict } from "../catalog/validate.js";
import { HookbusError, isHookbusError } from "../foundation/errors.js";
import { handlerFor, type Policy, type PolicyTools } from "./policy.js";
import { createSessionState, type SessionStateStore } from "./state/session-state.js";
import type { CallFacts } from "./call-facts.js";
import type { MaybePromise } from "../foundation/hot-path.js";

/**
 * ok: the handler answered (with a verdict, or none = no opinion). invalid: its verdict failed
 * the hook's schema (HOOKBUS_INVALID_VERDICT). error: the input failed validation, the handler
 * threw, or the policy has no handler for the hook.
 */
export type InvokeStatus = "ok" | "error" | "invalid";

export interface InvokeResult<H extends HookName = HookName> {
  status: InvokeStatus;
  /** The validated verdict (status ok, modifying hooks); absent for no opinion. */
  verdict?: H extends ModifyingHookName ? Verdict<H> : never;
  error?: WireError;
  /** From the start of validation to the validated verdict. */
  latencyMs: number;
}

export interface InvokeOptions {
  /** The call id (or an observation's event id) handed to the handler. */
  callId: string;
  /** Where `tools.state` keeps the policy's session state (replay: a MemorySessionStateStore). */
  state: SessionStateStore;
  logger?: Logger;
  /** Handed to the handler as `tools.signal`; defaults to one that never aborts. */
  signal?: AbortSignal;
  /** Epoch ms when the caller stops waiting: session-state operations give up then. */
  deadline?: number;
  /**
   * The caller has already validated `event` and `context` against the hook's schemas (replay
   * validates a record's input once for all its policies): they are handed over as they are.
   * Never set for input from the network.
   * @internal
   */
  inputValidated?: boolean;
  /** The call's facts, handed to the handler as `tools.facts` (the policy request's `facts`). */
  facts?: CallFacts | undefined;
}

const silent = pino({ level: "silent" });

/** Error codes a handler may raise on purpose through the SDK and that keep their meaning on the wire. */
const PASS_THROUGH_CODES = new Set([
  "HOOKBUS_STATE_CONFLICT",
  "HOOKBUS_POLICY_TIMEOUT",
  // The merge never lets it fail open (docs/privacy.md, "Session state").
  "HOOKBUS_SESSION_ERASED",
]);

export async function invokePolicy<H extends HookName>(
  policy: Policy,
  hook: H,
  event: unknown,
  context: unknown,
  options: InvokeOptions,
): Promise<InvokeResult<H>> {
  return invokePolicyNow(policy, hook, event, context, options);
}

/**
 * As `invokePolicy`, without a promise when the handler answers synchronously: the result, or a
 * promise only when the handler returned one. Replay re-decides a record per policy with it, and
 * an await on an answer that is already there is pure cost there. Never throws either.
 * @internal
 */
export function invokePolicyNow<H extends HookName>(
  policy: Policy,
  hook: H,
  event: unknown,
  context: unknown,
  options: InvokeOptions,
): MaybePromise<InvokeResult<H>> {
  const call = new Invocation<H>(policy, hook, options);
  const handler = resolveHandler(policy, hook);
  if (handler instanceof HookbusError) return call.fail("error", handler);

  // The handler only ever sees input that matches its hook's schemas.
  let validEvent: unknown;
  let validContext: { sessionKey: string };
  try {
    validEvent = options.inputValidated === true ? event : parseEvent(hook, event);
    validContext =
      options.inputValidated === true
        ? (context as { sessionKey: string })
        : parseContext(hook, context);
  } catch (error) {
    call.log().warn({ err: error }, "rejected invalid input before the handler");
    return call.fail("error", asHookbusError(error, policy.name, hook));
  }

  const tools = new LazyTools(policy.name, validContext.sessionKey, options, call, hook);
  let returned: unknown;
  try {
    returned = handler(validEvent, validContext, tools);
  } catch (error) {
    return call.failed(error);
  }
  if (isThenable(returned)) {
    return Promise.resolve(returned).then(
      (value) => call.answered(value),
      (error: unknown) => call.failed(error),
    );
  }
  return call.answered(returned);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** One policy's answer in the making: its latency clock, its logger (made on first use), its result. */
class Invocation<H extends HookName> {
  private readonly started = performance.now();
  // Built on first use: most calls never log, and a pino child per call shows up in profiles.
  private childLogger: Logger | undefined;

  constructor(
    private readonly policy: Policy,
    private readonly hook: H,
    private readonly options: InvokeOptions,
  ) {}

  log(): Logger {
    return (this.childLogger ??= (this.options.logger ?? silent).child({
      policy: this.policy.name,
      hook: this.hook,
      callId: this.options.callId,
    }));
  }

  // Not `{ ...result, latencyMs }`, per policy and per call (hot path: foundation/hot-path.ts).
  finish(result: Omit<InvokeResult<H>, "latencyMs">): InvokeResult<H> {
    const finished = result as InvokeResult<H>;
    finished.latencyMs = performance.now() - this.started;
    return finished;
  }

  fail(status: "error" | "invalid", error: HookbusError): InvokeResult<H> {
    return this.finish({ status, error: error.toJSON() });
  }

  failed(error: unknown): InvokeResult<H> {
    this.log().warn({ err: error }, "policy handler failed");
    return this.fail("error", handlerError(error, this.policy.name, this.hook));
  }

  answered(returned: unknown): InvokeResult<H> {
    const { hook, policy } = this;
    if (!isModifyingHook(hook) || returned === undefined || returned === null) {
      return this.finish({ status: "ok" });
    }
    try {
      const verdict = parseVerdict(hook, returned, policy.name);
      return this.finish({ status: "ok", verdict: verdict as InvokeResult<H>["verdict"] });
    } catch (error) {
      this.log().warn({ err: error }, "policy returned an invalid verdict");
      return this.fail("invalid", asHookbusError(error, policy.name, hook));
    }
  }
}

/** The policy's handler for the hook, or the coded error the caller answers with instead. */
function resolveHandler(
  policy: Policy,
  hook: HookName,
): NonNullable<ReturnType<typeof handlerFor>> | HookbusError {
  if (!isHookName(hook)) {
    return new HookbusError("HOOKBUS_UNKNOWN_HOOK", `unknown hook ${JSON.stringify(hook)}`, {
      hook: String(hook),
      policy: policy.name,
    });
  }
  const handler = handlerFor(policy, hook);
  if (handler === undefined) {
    return new HookbusError(
      "HOOKBUS_POLICY_ERROR",
      `policy "${policy.name}" has no handler for ${hook} (it handles ${policy.hookNames.join(", ")})`,
      { hook, policy: policy.name },
    );
  }
  return handler;
}

/**
 * The tools a handler does not touch cost nothing: each is made on first access. A class (getters
 * on its prototype), not an object literal with getters (hot path: foundation/hot-path.ts).
 */
class LazyTools implements PolicyTools {
  readonly callId: string;
  readonly #facts: CallFacts | undefined;
  readonly #hook: string;
  #state: PolicyTools["state"] | undefined;
  #never: AbortSignal | undefined;
  readonly #policyName: string;
  readonly #sessionKey: string;
  readonly #options: InvokeOptions;
  readonly #call: { log(): Logger };

  constructor(
    policyName: string,
    sessionKey: string,
    options: InvokeOptions,
    call: { log(): Logger },
    hook: string,
  ) {
    this.callId = options.callId;
    this.#facts = options.facts;
    this.#hook = hook;
    this.#policyName = policyName;
    this.#sessionKey = sessionKey;
    this.#options = options;
    this.#call = call;
  }

  get state(): PolicyTools["state"] {
    return (this.#state ??= createSessionState(
      this.#options.state,
      this.#policyName,
      this.#sessionKey,
      this.#options.deadline,
    ));
  }

  get logger(): Logger {
    return this.#call.log();
  }

  /** Read by the handler: a modifying hook's request without facts says why, once per policy. */
  get facts(): CallFacts | undefined {
    if (this.#facts === undefined && isModifyingHook(this.#hook))
      warnNoFactsOnce(this.#policyName, this.#call.log());
    return this.#facts;
  }

  get signal(): AbortSignal {
    return this.#options.signal ?? (this.#never ??= new AbortController().signal);
  }
}

/** Policies told so far (one entry per policy this process serves, so bounded by them). */
const toldNoFacts = new Set<string>();

function warnNoFactsOnce(policy: string, logger: Logger): void {
  if (toldNoFacts.has(policy)) return;
  toldNoFacts.add(policy);
  logger.warn(
    { policy },
    "tools.facts is absent: the coordinator sends the call's facts only to a policy whose registry entry declares `facts: true` (docs/policies.md); treat their absence as unknown, never as harmless",
  );
}

function handlerError(error: unknown, policy: string, hook: string): HookbusError {
  if (isHookbusError(error) && PASS_THROUGH_CODES.has(error.code)) return error;
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  return new HookbusError(
    "HOOKBUS_POLICY_ERROR",
    `policy "${policy}" failed on ${hook}: ${message}`,
    {
      hook,
      policy,
      // Name and code only: stack traces stay in the worker's log, not on the wire.
      cause: { name, ...(isHookbusError(error) ? { code: error.code } : {}) },
    },
    error,
  );
}

function asHookbusError(error: unknown, policy: string, hook: string): HookbusError {
  if (isHookbusError(error)) return error;
  return new HookbusError(
    "HOOKBUS_INTERNAL",
    `validating ${hook} for policy "${policy}": ${String(error)}`,
    { hook, policy },
    error,
  );
}
