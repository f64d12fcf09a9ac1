/**
 * The candidate policy set: the registry file says which policies handle which hook (priority,
 * failure mode, shadow), the loaded modules supply the code. A registry policy without a module
 * is an error (replaying without it would silently drop a policy, the way a live policy without
 * a worker never silently disappears); a module the registry does not name is unused.
 */
import {
  OBSERVATIONAL_HOOK_NAMES,
  type ModifyingHookName,
  type ObservationalHookName,
} from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import { isCedarPolicy, parseRegistryDocument, type RegistryPolicy } from "../registry/document.js";
import { RegistrySnapshot } from "../registry/snapshot.js";
import { handlerFor, type Policy } from "../policy/policy.js";
import { cedarPolicy } from "../policy/cedar-policy.js";
import { callFacts, factsOptionsOf, type CallFacts } from "../policy/call-facts.js";
import type { DecisionRecord } from "../log/record.js";
import { SessionLedger } from "./session-ledger.js";

/** One registry entry with the code that answers for it. */
export interface Candidate {
  entry: RegistryPolicy;
  policy: Policy;
}

export interface CandidateSet {
  /** Candidates of a modifying hook, in merge order (priority, then name). */
  forHook(hook: ModifyingHookName): readonly Candidate[];
  /** Candidate policies with a handler for an observational hook (fed observation records). */
  observers(hook: ObservationalHookName): readonly Policy[];
  /** Names of loaded policies the registry does not list: they take no part in the replay. */
  unused: string[];
  /** Registry entries whose module has no handler for a listed hook (it fails as it would live). */
  warnings: string[];
  /**
   * A call's facts under the candidate registry (its vocabulary and internal domains), computed
   * as the coordinator computes them: replay and `policy test` hand them to every policy.
   */
  factsOf(call: Pick<DecisionRecord, "hook" | "event" | "context">): CallFacts;
  /** The session facts the Cedar entries read: the caller tells it every merged decision. */
  session: SessionLedger;
}

/** Loaded modules by name; two different policies with one name are refused. */
function byName(policies: readonly Policy[]): Map<string, Policy> {
  const map = new Map<string, Policy>();
  for (const policy of policies) {
    const known = map.get(policy.name);
    if (known !== undefined && known !== policy) {
      throw new HookbusError(
        "HOOKBUS_INVALID_POLICY",
        `two loaded policies are named "${policy.name}": load one module per policy name`,
        { policy: policy.name },
      );
    }
    map.set(policy.name, policy);
  }
  return map;
}

/**
 * The registry's Cedar entries as policies, classifying tools by the registry's vocabulary; a
 * loaded module may not take a Cedar entry's name.
 */
function cedarPolicies(
  snapshot: RegistrySnapshot,
  loaded: readonly Policy[],
  session: SessionLedger,
): Policy[] {
  const names = new Set(loaded.map((p) => p.name));
  return snapshot.document.policies.filter(isCedarPolicy).map((entry) => {
    if (names.has(entry.name)) {
      throw new HookbusError(
        "HOOKBUS_INVALID_POLICY",
        `"${entry.name}" is a Cedar policy in the registry and a loaded module: rename one`,
        { policy: entry.name },
      );
    }
    return cedarPolicy(entry.name, entry.cedar, {
      source: entry.source,
      vocabulary: snapshot.vocabulary,
      session,
    });
  });
}

export function buildCandidates(policies: readonly Policy[], registry: unknown): CandidateSet {
  const document = parseRegistryDocument(registry, "the candidate registry");
  const snapshot = new RegistrySnapshot(0, document);
  // Session facts are read by Cedar entries only: without one, nothing needs them learnt.
  const session = new SessionLedger(snapshot.vocabulary, document.policies.some(isCedarPolicy));
  const modules = byName([...policies, ...cedarPolicies(snapshot, policies, session)]);

  const missing = document.policies.filter((entry) => !modules.has(entry.name));
  if (missing.length > 0) {
    const names = missing.map((entry) => `"${entry.name}"`).join(", ");
    const loaded = [...modules.keys()].map((n) => `"${n}"`).join(", ") || "none";
    throw new HookbusError(
      "HOOKBUS_INVALID_POLICY",
      `the registry names ${missing.length === 1 ? "a policy" : "policies"} with no loaded module: ${names} ` +
        `(loaded: ${loaded}); pass the module that exports definePolicy({ name: ${JSON.stringify(missing[0]!.name)}, ... }) ` +
        `with --policies, or remove the entry from the registry`,
      { policy: missing[0]!.name, missing: missing.map((entry) => entry.name) },
    );
  }

  const registered = new Set(document.policies.map((entry) => entry.name));
  const unused = [...modules.keys()].filter((name) => !registered.has(name)).sort();
  const warnings: string[] = [];
  const hooks = new Map<ModifyingHookName, Candidate[]>();
  for (const entry of document.policies) {
    const policy = modules.get(entry.name)!;
    for (const hook of entry.hooks) {
      if (handlerFor(policy, hook) === undefined) {
        warnings.push(
          `policy "${entry.name}" is registered for ${hook} but its module has no ${hook} handler: it fails there (HOOKBUS_POLICY_ERROR), as its workers would`,
        );
      }
    }
  }
  const forHook = (hook: ModifyingHookName): readonly Candidate[] => {
    let list = hooks.get(hook);
    if (list === undefined) {
      list = snapshot
        .policiesFor(hook)
        .map((entry) => ({ entry, policy: modules.get(entry.name)! }));
      hooks.set(hook, list);
    }
    return list;
  };

  const observing = new Map<ObservationalHookName, Policy[]>();
  for (const hook of OBSERVATIONAL_HOOK_NAMES) {
    const list = document.policies
      .map((entry) => modules.get(entry.name)!)
      .filter((policy) => handlerFor(policy, hook) !== undefined);
    if (list.length > 0) observing.set(hook, list);
  }
  return {
    forHook,
    observers: (hook) => observing.get(hook) ?? [],
    unused,
    warnings,
    factsOf: (call) => callFacts(call.hook, call.event, call.context, factsOptionsOf(snapshot)),
    session,
  };
}
