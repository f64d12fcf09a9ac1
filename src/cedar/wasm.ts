/**
 * The one door to `@cedar-policy/cedar-wasm` (its Node build). Everything else in src/cedar speaks
 * hookbus types; only this file knows the binding's shapes, and only this file holds the engine.
 *
 * The engine is untrusted code (DESIGN.md §7): a WebAssembly instance whose stack overflow or
 * out-of-bounds access is a trap (`RangeError`, `WebAssembly.RuntimeError`) that leaves its memory
 * in whatever state the trap caught it, so every later call may answer wrongly or trap again (seen:
 * a deep set, then `memory access out of bounds` on a valid one). So every call goes through
 * `guarded`: an instance that traps is thrown away at once and a fresh one loaded (the compiled
 * module is cached by V8: ~8 ms), `generation` grows so that pre-parsed sets are parsed again into
 * the new instance (scope-index.ts), and the caller gets HOOKBUS_CEDAR_ENGINE_TRAP for the set
 * that trapped. No call ever reaches an instance that trapped.
 */
import { createRequire } from "node:module";
import type * as CedarBindings from "@cedar-policy/cedar-wasm/nodejs";
import { HookbusError } from "../foundation/errors.js";

type Bindings = typeof CedarBindings;
/** `WebAssembly` is a Node global our `lib` setting does not declare. */
const WasmRuntimeError = (
  globalThis as unknown as { WebAssembly: { RuntimeError: abstract new () => Error } }
).WebAssembly.RuntimeError;

export type {
  AuthorizationAnswer,
  CedarValueJson,
  Context as CedarContext,
  DetailedError,
  EntityJson,
  EntityUidJson,
  PolicyJson,
  PolicyToJsonAnswer,
  ValidationAnswer,
} from "@cedar-policy/cedar-wasm/nodejs";

const require = createRequire(import.meta.url);
const BINDINGS_PATH = require.resolve("@cedar-policy/cedar-wasm/nodejs");

/** A fresh instance: the bindings keep their instance in module state, so load the module anew. */
function loadBindings(): Bindings {
  delete require.cache[BINDINGS_PATH];
  return require(BINDINGS_PATH) as Bindings;
}

let engine: Bindings = loadBindings();
let generation = 0;
let traps = 0;

/** Grows each time a trapped instance is replaced: what was pre-parsed before is gone. */
export function engineGeneration(): number {
  return generation;
}

const preparsedIn = new WeakMap<object, number>();

/** Records that what `owner` pre-parsed is in the current instance. */
export function markPreparsed(owner: object): void {
  preparsedIn.set(owner, generation);
}

/** Whether what `owner` pre-parsed is still in the engine (false once a trap replaced it). */
export function isPreparsed(owner: object): boolean {
  return preparsedIn.get(owner) === generation;
}

/** Instances thrown away since the process started (a metric for operators and tests). */
export function engineTraps(): number {
  return traps;
}

/** A trap of the WebAssembly machine, not an answer of Cedar's. */
export function isEngineTrap(error: unknown): boolean {
  return error instanceof WasmRuntimeError || error instanceof RangeError;
}

export function isEngineTrapError(error: unknown): boolean {
  return error instanceof HookbusError && error.code === "HOOKBUS_CEDAR_ENGINE_TRAP";
}

function guarded<A extends unknown[], R>(
  name: string,
  call: (bindings: Bindings, ...args: A) => R,
): (...args: A) => R {
  return function guardedCall(...args: A): R {
    const used = engine;
    try {
      return call(used, ...args);
    } catch (error) {
      if (!isEngineTrap(error)) throw error;
      if (engine === used) {
        engine = loadBindings();
        generation++;
        traps++;
      }
      const message = error instanceof Error ? error.message : String(error);
      throw new HookbusError(
        "HOOKBUS_CEDAR_ENGINE_TRAP",
        `the Cedar engine trapped in ${name} (${message}); the instance was replaced`,
        { operation: name },
        error,
      );
    }
  };
}

/** The engine's functions hookbus uses, each guarded. */
export const cedarWasm = {
  policySetTextToParts: guarded("policySetTextToParts", (e, text: string) =>
    e.policySetTextToParts(text),
  ),
  policyToJson: guarded("policyToJson", (e, text: string) => e.policyToJson(text)),
  preparsePolicySet: guarded(
    "preparsePolicySet",
    (e, id: string, policies: Parameters<Bindings["preparsePolicySet"]>[1]) =>
      e.preparsePolicySet(id, policies),
  ),
  statefulIsAuthorized: guarded(
    "statefulIsAuthorized",
    (e, call: Parameters<Bindings["statefulIsAuthorized"]>[0]) => e.statefulIsAuthorized(call),
  ),
  validate: guarded("validate", (e, call: Parameters<Bindings["validate"]>[0]) => e.validate(call)),
};

/** One line per Cedar error: its message and, when Cedar gives one, its help. */
export function describeErrors(
  errors: readonly { message: string; help?: string | null }[],
): string[] {
  return errors.map((e) => (e.help ? `${e.message} (${e.help})` : e.message));
}

/** The Cedar version these bindings implement (shown by `hookbus policy schema --cedar`). */
export function cedarVersion(): string {
  return engine.getCedarVersion();
}
