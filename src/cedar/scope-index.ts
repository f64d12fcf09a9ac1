/**
 * Which policies of a set can apply to a request, by their scope. The engine's time per call grows
 * with every policy in the set it is handed (about 2 µs each, matching or not: docs/cedar.md), and
 * a policy whose scope cannot match a request adds nothing to Cedar's answer — it is not
 * satisfied and, since the scope is checked before the condition, it cannot error. So a request
 * is evaluated against the sub-set of policies whose action and resource constraints can match
 * it, pre-parsed once per (action, resource type, named resource). Conservative: any constraint
 * not read here (`in`, templates) keeps the policy in every sub-set. Bounded: the keys come from
 * the set's own text (6 hooks × 2 resource types × the resources its policies name), which
 * matters because the bindings cannot free a pre-parsed set.
 */
import { HookbusError } from "../foundation/errors.js";
import {
  cedarWasm,
  engineGeneration,
  isPreparsed,
  markPreparsed,
  type EntityUidJson,
  type PolicyJson,
} from "./wasm.js";

/** What the index reads of a set (policy-set.ts's CedarPolicySet, which builds the index). */
interface CedarPolicySet {
  readonly source: string;
  readonly engineId: string;
  readonly policies: ReadonlyMap<string, { readonly id: string; readonly text: string }>;
}

interface Scope {
  id: string;
  text: string;
  /** The one action it applies to, or undefined for any. */
  action?: string;
  /** `resource == T::"id"`. */
  resourceEq?: { type: string; id: string };
  /** `resource is T`. */
  resourceIs?: string;
}

interface ScopeIndex {
  scopes: Scope[];
  /** Resources some policy names with `==`, as `type::id`. */
  named: Set<string>;
  /** Engine ids of the sub-sets pre-parsed so far, by key. */
  subsets: Map<string, string>;
  /**
   * The same engine ids by the policies kept: keys that keep the same policies share one
   * pre-parsed sub-set (the bindings cannot free one, and each costs ~40 µs per policy to parse).
   */
  byPolicies: Map<string, string>;
  /** The engine instance they were pre-parsed into (wasm.ts replaces one that traps). */
  generation: number;
}

const indexes = new WeakMap<CedarPolicySet, ScopeIndex>();

/** The engine id to evaluate `action` on `resource` against (the whole set's when all apply). */
export function engineIdFor(
  set: CedarPolicySet,
  action: EntityUidJson,
  resource: EntityUidJson,
): string {
  const index = indexFor(set);
  if (index.generation !== engineGeneration()) resetSubsets(index);
  const engineId = subsetFor(set, index, action, resource);
  if (engineId === set.engineId && !isPreparsed(set)) preparseWhole(set);
  return engineId;
}

function subsetFor(
  set: CedarPolicySet,
  index: ScopeIndex,
  action: EntityUidJson,
  resource: EntityUidJson,
): string {
  const act = uidOf(action);
  const res = uidOf(resource);
  if (act === undefined || res === undefined) return set.engineId;
  const named = index.named.has(`${res.type}::${res.id}`);
  return subsetOf(set, index, { action: act.id, type: res.type, id: named ? res.id : null });
}

/** A request's kind as far as scopes tell: its action, its resource's type and, if named, id. */
interface RequestKind {
  action: string;
  type: string;
  /** The resource's id when some policy names it; null for every resource none names. */
  id: string | null;
}

function subsetOf(set: CedarPolicySet, index: ScopeIndex, kind: RequestKind): string {
  const key = JSON.stringify([kind.action, kind.type, kind.id]);
  const known = index.subsets.get(key);
  if (known !== undefined) return known;
  const kept = index.scopes.filter((s) => applies(s, kind));
  let engineId = set.engineId;
  if (kept.length < index.scopes.length) {
    const ids = JSON.stringify(kept.map((s) => s.id));
    engineId = index.byPolicies.get(ids) ?? preparseSubset(set, key, kept);
    index.byPolicies.set(ids, engineId);
  }
  index.subsets.set(key, engineId);
  return engineId;
}

function preparseSubset(set: CedarPolicySet, key: string, kept: readonly Scope[]): string {
  const engineId = `${set.engineId}:${key}`;
  const staticPolicies = Object.fromEntries(kept.map((s) => [s.id, s.text]));
  const parsed = cedarWasm.preparsePolicySet(engineId, { staticPolicies });
  return parsed.type === "failure" ? set.engineId : engineId; // the whole set parsed: never expected
}

/**
 * Every sub-set a request of `hooks` can need, pre-parsed now, when a revision loads, not by the
 * first call that needs it: one per (hook, resource type, resource the set names, or none),
 * the whole set too when some request keeps every policy. `pause` runs between two of them, so
 * calls under the revision in force are decided in between. Returns how many keys were read.
 */
export async function preparseSubsets(
  set: CedarPolicySet,
  hooks: readonly string[],
  pause: () => Promise<void>,
): Promise<number> {
  const index = indexFor(set);
  if (index.generation !== engineGeneration()) resetSubsets(index);
  let keys = 0;
  for (const kind of requestKinds(index, hooks)) {
    const engineId = subsetOf(set, index, kind);
    if (engineId === set.engineId && !isPreparsed(set)) preparseWhole(set);
    keys++;
    await pause();
  }
  return keys;
}

/** The request kinds of `hooks`: a tool or a session, each named one and one no policy names. */
function* requestKinds(index: ScopeIndex, hooks: readonly string[]): Generator<RequestKind> {
  const named = [...index.named].map((name) => {
    const at = name.indexOf("::");
    return { type: name.slice(0, at), id: name.slice(at + 2) };
  });
  for (const action of hooks) {
    for (const type of RESOURCE_TYPES) yield { action, type, id: null };
    for (const resource of named) yield { action, type: resource.type, id: resource.id };
  }
}

/** The resources of hookbus's requests (request.ts): a tool, or the session for the whole call. */
const RESOURCE_TYPES = ["Tool", "Session"] as const;

function resetSubsets(index: ScopeIndex): void {
  index.subsets.clear(); // a trapped engine was replaced: none of them is in the new one
  index.byPolicies.clear();
  index.generation = engineGeneration();
}

/**
 * The whole set, when a request needs it and it is not in the engine: a set loaded off the
 * decision path (loader.ts) is pre-parsed here on first need, sub-set by sub-set, and a set
 * pre-parsed before a trap replaced the engine (wasm.ts) is parsed again. Bounded by the limits.
 */
function preparseWhole(set: CedarPolicySet): void {
  const staticPolicies = Object.fromEntries([...set.policies].map(([id, p]) => [id, p.text]));
  const parsed = cedarWasm.preparsePolicySet(set.engineId, { staticPolicies });
  if (parsed.type === "failure") {
    throw new HookbusError("HOOKBUS_POLICY_ERROR", `${set.source} no longer pre-parses`);
  }
  markPreparsed(set);
}

function applies(scope: Scope, kind: RequestKind): boolean {
  if (scope.action !== undefined && scope.action !== kind.action) return false;
  if (scope.resourceIs !== undefined && scope.resourceIs !== kind.type) return false;
  const eq = scope.resourceEq;
  return eq === undefined || (eq.type === kind.type && eq.id === kind.id);
}

/** Builds the set's index from its policies' JSON (in the set's order), with no engine call. */
export function indexScopes(set: CedarPolicySet, json: readonly PolicyJson[]): void {
  const scopes = [...set.policies.values()].map((p, i) => {
    const policy = json[i];
    return policy === undefined ? { id: p.id, text: p.text } : scopeOfJson(p.id, p.text, policy);
  });
  indexes.set(set, indexOf(scopes));
}

function indexFor(set: CedarPolicySet): ScopeIndex {
  let index = indexes.get(set);
  if (index !== undefined) return index;
  index = indexOf([...set.policies.values()].map((p) => scopeOf(p.id, p.text)));
  indexes.set(set, index);
  return index;
}

function indexOf(scopes: Scope[]): ScopeIndex {
  const named = new Set(
    scopes.flatMap((s) => (s.resourceEq ? [`${s.resourceEq.type}::${s.resourceEq.id}`] : [])),
  );
  return {
    scopes,
    named,
    subsets: new Map(),
    byPolicies: new Map(),
    generation: engineGeneration(),
  };
}

function scopeOf(id: string, text: string): Scope {
  const json = cedarWasm.policyToJson(text);
  if (json.type === "failure") return { id, text }; // parsed before: never expected; kept everywhere
  return scopeOfJson(id, text, json.json);
}

function scopeOfJson(id: string, text: string, json: PolicyJson): Scope {
  const scope: Scope = { id, text };
  const { action, resource } = json;
  if (action.op === "==" && "entity" in action) {
    const uid = uidOf(action.entity);
    if (uid?.type === "Action") scope.action = uid.id;
  }
  if (resource.op === "==" && "entity" in resource) {
    const uid = uidOf(resource.entity);
    if (uid !== undefined) scope.resourceEq = uid;
  } else if (resource.op === "is" && !("in" in resource && resource.in !== undefined)) {
    scope.resourceIs = resource.entity_type;
  }
  return scope;
}

function uidOf(uid: EntityUidJson): { type: string; id: string } | undefined {
  const plain = "__entity" in uid ? uid.__entity : uid;
  return typeof plain.type === "string" && typeof plain.id === "string" ? plain : undefined;
}
