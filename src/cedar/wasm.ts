/**
 * The one door to `@cedar-policy/cedar-wasm` (its Node build, loaded synchronously). Everything
 * else in src/cedar speaks hookbus types; only this file knows the binding's shapes.
 */
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";

export type {
  AuthorizationAnswer,
  CedarValueJson,
  Context as CedarContext,
  DetailedError,
  EntityJson,
  EntityUidJson,
  ValidationAnswer,
} from "@cedar-policy/cedar-wasm/nodejs";

export const cedarWasm = cedar;

/** One line per Cedar error: its message and, when Cedar gives one, its help. */
export function describeErrors(
  errors: readonly { message: string; help?: string | null }[],
): string[] {
  return errors.map((e) => (e.help ? `${e.message} (${e.help})` : e.message));
}

/** The Cedar version these bindings implement (shown by `hookbus policy schema --cedar`). */
export function cedarVersion(): string {
  return cedar.getCedarVersion();
}
