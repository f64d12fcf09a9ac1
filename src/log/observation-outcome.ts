/**
 * The outcome token an observation is filed under. Most observations are `observed`; a tool call
 * that was refused where no coordinator decided it (the agent SDK's after_llm_call gate, or an
 * adapter: a tool not offered this turn, a gate that could not decide) is reported as an
 * `after_tool_call` with `blocked: true`, and filed under `block`, so audit queries and counts by
 * outcome see every refusal (issue 22). A refusal a coordinator decided is already a `block`
 * decision record: its after_tool_call (`blockSource: "decision"`) stays `observed`, never
 * counted twice.
 */
import type { RecordKind } from "../bus/subjects.js";

/** The `blockSource` values of refusals that no decision record holds. */
const LOCAL_REFUSALS: ReadonlySet<unknown> = new Set(["after_llm_call_gate", "adapter"]);

/** True for an after_tool_call event that reports a refusal no decision record holds. */
export function isLocalRefusal(hook: string, event: unknown): boolean {
  if (hook !== "after_tool_call" || typeof event !== "object" || event === null) return false;
  const e = event as { blocked?: unknown; blockSource?: unknown };
  return e.blocked === true && LOCAL_REFUSALS.has(e.blockSource);
}

/** `block` for a local refusal (see the header), `observed` for every other observation. */
export function observationOutcome(
  hook: string,
  event: unknown,
): Extract<RecordKind, "observed" | "block"> {
  return isLocalRefusal(hook, event) ? "block" : "observed";
}
