/**
 * `definePolicy`: a policy is a name, an optional version and one handler per hook it cares
 * about. Handlers are typed from the hook catalog, so the event and context of each hook arrive
 * with their own types, and a verdict field the hook does not allow fails to compile.
 */
import type { Logger } from "pino";
import { POLICY_NAME_PATTERN } from "../bus/tokens.js";
import {
  HOOK_NAMES,
  isHookName,
  type HookContext,
  type HookEvent,
  type HookName,
  type ModifyingHookName,
  type ObservationalHookName,
  type Verdict,
} from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import type { SessionState } from "./state/session-state.js";
import type { CallFacts } from "./call-facts.js";

/** What every handler gets besides the event and context. */
export interface PolicyTools {
  /** The call being decided (modifying hooks) or the observation's event id (observational hooks). */
  callId: string;
  /** This policy's memory for the call's session (`context.sessionKey`), shared by all its workers. */
  state: SessionState;
  /** Bound to the policy, hook and call id. */
  logger: Logger;
  /**
   * Aborted when the caller stops waiting (the request's `timeoutMs`, or `Hookbus-Timeout-Ms`, passed) or the
   * runner is forced to stop. Pass it to fetch() and the like; an answer sent after the deadline
   * is still recorded by the coordinator as a late verdict.
   */
  signal: AbortSignal;
  /**
   * What the call does (docs/facts.md): the fact set the coordinator computed once for the call
   * (shell facts in each tool's `shell` slot). Sent only to a policy whose registry entry
   * declares `facts: true`; absent otherwise (the first read of an absent one logs a warning
   * that says so), for observational hooks and from a coordinator older than the field. Replay
   * and `policy test` always hand it over.
   */
  facts: CallFacts | undefined;
}

type HandlerResult<H extends ModifyingHookName> = Verdict<H> | undefined | void;

/** A handler of a modifying hook: return a verdict, or nothing for "no opinion". */
export type ModifyingHookHandler<H extends ModifyingHookName> = (
  event: HookEvent<H>,
  context: HookContext<H>,
  tools: PolicyTools,
) => HandlerResult<H> | Promise<HandlerResult<H>>;

/** A handler of an observational hook: it is told, it does not decide. */
export type ObservationalHookHandler<H extends ObservationalHookName> = (
  event: HookEvent<H>,
  context: HookContext<H>,
  tools: PolicyTools,
) => void | Promise<void>;

export type PolicyHooks = {
  [H in ModifyingHookName]?: ModifyingHookHandler<H>;
} & {
  [H in ObservationalHookName]?: ObservationalHookHandler<H>;
};

/** Keys of a returned object (or of any member of a returned union) that the verdict lacks. */
type ExtraKeys<R, V> = R extends object ? Exclude<keyof R, keyof V> : never;

/**
 * Makes excess verdict fields a compile error. TypeScript runs no excess-property check on an
 * object literal returned from a contextually typed function (the inferred return type is no
 * longer "fresh"), so `return { block: true, blok: true }` would compile and only fail at run
 * time with HOOKBUS_INVALID_VERDICT. Here each handler's inferred return type is inspected and,
 * when it has a field its hook's verdict does not, the expected type is narrowed to one whose
 * error message names the field. Keys that are not hooks at all become `never`.
 */
export type ExactHooks<T> = {
  [K in keyof T]: K extends ModifyingHookName
    ? T[K] extends (...args: never[]) => infer R
      ? [ExtraKeys<Awaited<R>, Verdict<K>>] extends [never]
        ? T[K]
        : (...args: Parameters<ModifyingHookHandler<K>>) => {
            [
              X in ExtraKeys<Awaited<R>, Verdict<K>>
            ]: `"${X & string}" is not a field of a ${K} verdict`;
          }
      : T[K]
    : K extends ObservationalHookName
      ? T[K]
      : never;
};

export interface PolicyDefinition<T extends PolicyHooks = PolicyHooks> {
  /** The policy's name in the registry: 1-64 of `A-Z a-z 0-9 _ -`. */
  name: string;
  /** Sent with every verdict (the reply's `version`), so the log says which code decided. */
  version?: string;
  hooks: T;
}

/** A validated policy, ready for `runPolicy` or `invokePolicy`. */
export interface Policy {
  readonly name: string;
  readonly version: string | undefined;
  readonly hooks: Readonly<PolicyHooks>;
  /** The hooks this policy has handlers for, in catalog order. */
  readonly hookNames: readonly HookName[];
}

export function definePolicy<const T extends PolicyHooks & ExactHooks<T>>(
  definition: PolicyDefinition<T>,
): Policy {
  const { name, version, hooks } = definition as PolicyDefinition;
  if (typeof name !== "string" || !POLICY_NAME_PATTERN.test(name)) {
    throw new HookbusError(
      "HOOKBUS_INVALID_POLICY",
      `invalid policy name ${JSON.stringify(name)}: use 1-64 characters of A-Z a-z 0-9 _ -`,
      { policy: String(name) },
    );
  }
  if (version !== undefined && (typeof version !== "string" || version === "")) {
    throw new HookbusError(
      "HOOKBUS_INVALID_POLICY",
      `policy "${name}": version must be a non-empty string`,
      { policy: name },
    );
  }
  if (typeof hooks !== "object" || hooks === null) {
    throw new HookbusError("HOOKBUS_INVALID_POLICY", `policy "${name}" has no hooks object`, {
      policy: name,
    });
  }
  for (const [hook, handler] of Object.entries(hooks)) {
    // Plain JavaScript callers get the checks the types give TypeScript callers.
    if (!isHookName(hook)) {
      throw new HookbusError("HOOKBUS_INVALID_POLICY", `policy "${name}": unknown hook "${hook}"`, {
        policy: name,
        hook,
      });
    }
    if (handler === undefined) continue;
    if (typeof handler !== "function") {
      throw new HookbusError(
        "HOOKBUS_INVALID_POLICY",
        `policy "${name}": the ${hook} handler is not a function`,
        { policy: name, hook },
      );
    }
  }
  const hookNames = HOOK_NAMES.filter(
    (hook) => typeof (hooks as Record<string, unknown>)[hook] === "function",
  );
  if (hookNames.length === 0) {
    throw new HookbusError("HOOKBUS_INVALID_POLICY", `policy "${name}" handles no hook`, {
      policy: name,
    });
  }
  return Object.freeze({
    name,
    version,
    hooks: Object.freeze({ ...hooks }),
    hookNames: Object.freeze(hookNames),
    [POLICY_BRAND]: true,
  });
}

/**
 * Marks what definePolicy made. `Symbol.for` so that the check holds across two copies of this
 * module (a policy file and the CLI may load hookbus from different paths).
 */
const POLICY_BRAND = Symbol.for("hookbus.policy");

/** Whether a value (say, a module export) is a policy made by definePolicy. */
export function isPolicy(value: unknown): value is Policy {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Record<symbol, unknown>)[POLICY_BRAND] === true
  );
}

/** The handler of `hook`, untyped: callers validate the event and context first. */
export function handlerFor(
  policy: Policy,
  hook: HookName,
): ((event: unknown, context: unknown, tools: PolicyTools) => unknown) | undefined {
  const handler = (policy.hooks as Record<string, unknown>)[hook];
  return typeof handler === "function"
    ? (handler as (event: unknown, context: unknown, tools: PolicyTools) => unknown)
    : undefined;
}
