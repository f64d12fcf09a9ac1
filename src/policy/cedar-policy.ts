/**
 * A Cedar policy set as an in-process `Policy`, so replay and `hookbus policy test` decide Cedar
 * registry entries with the code they use for modules. It reads its session facts from the
 * caller's `SessionFactReader`, which learns them as the coordinator does: from the MERGED
 * decision of every policy, after each call (src/replay/session-ledger.ts), never from this
 * policy's own verdict, so a mixed registry replays as it ran. Tools are classified by the
 * candidate registry's vocabulary, as the coordinator classifies them under that revision.
 */
import { MODIFYING_HOOK_NAMES } from "../catalog/catalog.js";
import {
  assertCedarTypes,
  evaluateCedar,
  parseCedarPolicySet,
  type SessionFacts,
} from "../cedar/index.js";
import { HookbusError } from "../foundation/errors.js";
import { toolVocabulary, type ToolVocabulary } from "../vocabulary/vocabulary.js";
import { definePolicy, type Policy, type PolicyHooks, type PolicyTools } from "./policy.js";

/** Session facts as the caller learnt them, and the time of the call being decided. */
export interface SessionFactReader {
  read(agentId: string, sessionKey: string): Promise<SessionFacts>;
  /** When the call being decided arrived (ms since the epoch): windows are counted at it. */
  now(): number;
}

export interface CedarPolicyOptions {
  /** Where the text came from (named in parse errors); default the policy's name. */
  source?: string | undefined;
  /** The registry's vocabulary (RegistrySnapshot.vocabulary); default the shipped one. */
  vocabulary?: ToolVocabulary;
  /** The session facts, learnt by the caller from merged decisions. */
  session: SessionFactReader;
}

/** The policy named `name` deciding with the Cedar text (parsed and type-checked here). */
export function cedarPolicy(name: string, text: string, options: CedarPolicyOptions): Policy {
  const vocabulary = options.vocabulary ?? toolVocabulary;
  const { session: reader } = options;
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
      const session = await reader.read(String(context.agentId), String(context.sessionKey));
      const now = reader.now();
      const result = evaluateCedar(set, {
        hook,
        context,
        event,
        session,
        now,
        vocabulary,
        facts: tools.facts,
      });
      if (result.status === "error") {
        throw new HookbusError("HOOKBUS_POLICY_ERROR", result.error?.message ?? "cedar error");
      }
      return result.verdict;
    };
  }
  const typed = hooks as PolicyHooks;
  return definePolicy({ name, version: set.hash, hooks: typed });
}
