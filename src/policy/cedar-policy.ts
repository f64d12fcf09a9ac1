/**
 * A Cedar policy set as an in-process `Policy`, so replay and `hookbus policy test` decide Cedar
 * registry entries with the code they use for modules. Its session facts live in the policy's
 * session state, updated as the coordinator updates them; unlike the coordinator, which updates
 * them from the merged decision, it sees only its own verdict, so a block by another policy of a
 * mixed registry still counts as a call here (docs/cedar.md). Tools are classified by the
 * candidate registry's vocabulary, as the coordinator classifies them under that revision.
 */
import type { ModifyingHookName } from "../catalog/catalog.js";
import { MODIFYING_HOOK_NAMES } from "../catalog/catalog.js";
import {
  afterToolCall,
  afterToolOutput,
  assertCedarTypes,
  emptySessionFacts,
  evaluateCedar,
  parseCedarPolicySet,
  type SessionFacts,
} from "../cedar/index.js";
import { HookbusError } from "../foundation/errors.js";
import { toolVocabulary, type ToolVocabulary } from "../vocabulary/vocabulary.js";
import { definePolicy, type Policy, type PolicyHooks, type PolicyTools } from "./policy.js";

const FACTS_KEY = "cedar.sessionFacts";

export interface CedarPolicyOptions {
  /** Where the text came from (named in parse errors); default the policy's name. */
  source?: string | undefined;
  /** The registry's vocabulary (RegistrySnapshot.vocabulary); default the shipped one. */
  vocabulary?: ToolVocabulary;
}

/** The policy named `name` deciding with the Cedar text (parsed and type-checked here). */
export function cedarPolicy(name: string, text: string, options: CedarPolicyOptions = {}): Policy {
  const vocabulary = options.vocabulary ?? toolVocabulary;
  const set = parseCedarPolicySet(text, options.source ?? name);
  assertCedarTypes(set);
  // Built by hook name: every modifying hook decides with the same set.
  const hooks: Record<string, unknown> = {};
  for (const hook of MODIFYING_HOOK_NAMES) {
    hooks[hook] = async (
      event: Record<string, unknown>,
      context: Record<string, unknown>,
      tools: PolicyTools,
    ) => {
      const session = (await tools.state.get<SessionFacts>(FACTS_KEY)) ?? emptySessionFacts();
      const result = evaluateCedar(set, {
        hook,
        context,
        event,
        session,
        vocabulary,
        facts: tools.facts,
      });
      if (result.status === "error") {
        throw new HookbusError("HOOKBUS_POLICY_ERROR", result.error?.message ?? "cedar error");
      }
      if (result.verdict?.block !== true) await learn(hook, event, tools, vocabulary);
      return result.verdict;
    };
  }
  hooks.after_tool_call = async (
    event: Record<string, unknown>,
    _c: unknown,
    tools: PolicyTools,
  ) => {
    if (event.blocked === true || typeof event.toolName !== "string") return;
    const tool = vocabulary.classify(event.toolName);
    await tools.state.update<SessionFacts>(FACTS_KEY, (f) =>
      afterToolOutput(f ?? emptySessionFacts(), tool),
    );
  };
  const typed = hooks as PolicyHooks;
  return definePolicy({ name, version: set.hash, hooks: typed });
}

async function learn(
  hook: ModifyingHookName,
  event: Record<string, unknown>,
  tools: PolicyTools,
  vocabulary: ToolVocabulary,
): Promise<void> {
  if (typeof event.toolName !== "string") return;
  const tool = vocabulary.classify(event.toolName);
  if (hook === "before_tool_call") {
    await tools.state.update<SessionFacts>(FACTS_KEY, (f) =>
      afterToolCall(f ?? emptySessionFacts(), tool),
    );
  } else if (hook === "before_tool_result") {
    await tools.state.update<SessionFacts>(FACTS_KEY, (f) =>
      afterToolOutput(f ?? emptySessionFacts(), tool),
    );
  }
}
