/**
 * What a Cedar policy set decides about one call, as a hookbus verdict. A satisfied `forbid`
 * blocks (reason: its `@reason`, else its id); a `forbid` with `@approval("title")` on
 * before_tool_call asks a person instead (a plain forbid beats it, as a block beats an approval);
 * on the LLM hooks a forbidden tool or tool call is narrowed away. A set with a `permit` is an
 * allowlist: a request no permit matches is blocked. A policy Cedar could not evaluate (an
 * attribute missing, an overflow) makes the whole evaluation an error, so the policy's failure
 * mode decides: Cedar skips an erroring policy, and a skipped forbid must never mean "allowed".
 */
import type { ModifyingHookName } from "../catalog/catalog.js";
import { SEVERITY_ORDER, type ApprovalSeverity } from "../catalog/approval.js";
import type { CedarPolicyInfo, CedarPolicySet } from "./policy-set.js";
import { cedarRequests, type CedarRequest, type RequestInput } from "./request.js";
import { isHookbusError } from "../foundation/errors.js";
import { cedarWasm, describeErrors, isEngineTrapError } from "./wasm.js";
import { pruneContext, type ContextPaths } from "./context-keys.js";
import { engineIdFor } from "./scope-index.js";
import { directAnswer, type DirectAnswer } from "./direct.js";

export interface CedarEvaluation {
  status: "ok" | "error";
  /** The verdict (status ok); undefined is no opinion. */
  verdict?: Record<string, unknown>;
  error?: { code: string; message: string };
  /** Ids of the policies that forbade something, in the set's order. */
  decidedBy: string[];
}

/** One request's answer: the forbids that matched, or why it could not be decided. */
interface RequestAnswer {
  forbids: CedarPolicyInfo[];
  /** No permit matched in an allowlist set. */
  notPermitted: boolean;
  errors: string[];
}

/**
 * Sets the engine trapped on (wasm.ts): they answer this error from then on without reaching the
 * engine again, so a set that can trap it fails by its own failure mode, once, and every other
 * set goes on being decided by a fresh instance.
 */
const trapped = new WeakMap<CedarPolicySet, string>();

export function evaluateCedar(set: CedarPolicySet, input: RequestInput): CedarEvaluation {
  const trap = trapped.get(set);
  if (trap !== undefined) return trapEvaluation(trap);
  try {
    return evaluateSet(set, input);
  } catch (error) {
    if (isEngineTrapError(error)) {
      const message = `cedar: ${(error as Error).message}; this set answers an error until it changes`;
      trapped.set(set, message);
      return trapEvaluation(message);
    }
    // A coded failure of this set (a sub-set that no longer pre-parses): its failure mode decides.
    if (!isHookbusError(error)) throw error;
    const failure = { code: error.code, message: `cedar: ${error.message}` };
    return { status: "error", error: failure, decidedBy: [] };
  }
}

function trapEvaluation(message: string): CedarEvaluation {
  return { status: "error", error: { code: "HOOKBUS_CEDAR_ENGINE_TRAP", message }, decidedBy: [] };
}

/** The paths of an attribute no policy reads: none of its fields is built. */
const NOT_READ: ContextPaths = { whole: false, children: new Map() };

function evaluateSet(set: CedarPolicySet, input: RequestInput): CedarEvaluation {
  // Spelled out, not `{ ...input, findSecrets: false }` (hot path: foundation/hot-path.ts); the
  // builders read only these fields.
  const keys = set.contextKeys;
  const readsSession = keys === "all" || keys.children.has("session");
  const requests = cedarRequests({
    hook: input.hook,
    context: input.context,
    event: input.event,
    session: input.session,
    now: input.now,
    vocabulary: input.vocabulary,
    findSecrets: set.readsSecrets ? input.findSecrets : false,
    readsSession: readsSession && input.readsSession !== false,
    facts: input.facts,
    callPaths: keys === "all" ? "all" : (keys.children.get("call") ?? NOT_READ),
  });
  const answers = requests.map((request) => answer(set, request));
  const errors = answers.flatMap((a) => a.errors);
  if (errors.length > 0) {
    return {
      status: "error",
      error: { code: "HOOKBUS_POLICY_ERROR", message: `cedar: ${errors.join("; ")}` },
      decidedBy: [],
    };
  }
  const decidedBy = orderedIds(set, answers);
  const whole = requests.findIndex((r) => r.target.kind === "call");
  const callAnswer = whole === -1 ? undefined : answers[whole];
  if (callAnswer !== undefined && denied(callAnswer)) {
    return { status: "ok", verdict: wholeCallVerdict(input.hook, callAnswer), decidedBy };
  }
  const narrowed = narrowingVerdict(input, requests, answers);
  return narrowed === undefined
    ? { status: "ok", decidedBy }
    : { status: "ok", verdict: narrowed, decidedBy };
}

/**
 * Answers already computed, per set, keyed by the exact JSON the engine would read. A Cedar
 * decision is a pure function of the policy set and that input (no clock, no randomness), so a
 * repeated request is answered without crossing into WebAssembly, where each call costs ~2 µs per
 * policy in the set (the engine copies its cached set on every call). Bounded per set, least
 * recently used forgotten; a set dropped from the registry takes its answers with it.
 */
const answerCache = new WeakMap<CedarPolicySet, Map<string, RequestAnswer>>();
const MAX_CACHED_ANSWERS = 1024;
/** Longer inputs (large params) are evaluated each time: caching them would hold too much. */
const MAX_CACHED_KEY_CHARS = 4096;

function answer(set: CedarPolicySet, request: CedarRequest): RequestAnswer {
  const context = pruneContext(request.context, set.contextKeys);
  const direct = directAnswer(set, { ...request, context });
  if (direct !== undefined) return answerOf(set, direct);
  const call = {
    principal: request.principal,
    action: request.action,
    resource: request.resource,
    context,
    entities: request.entities,
    preparsedPolicySetId: engineIdFor(set, request.action, request.resource),
  };
  const key = JSON.stringify(call);
  if (key.length > MAX_CACHED_KEY_CHARS) return engineAnswer(set, call);
  let cache = answerCache.get(set);
  if (cache === undefined) answerCache.set(set, (cache = new Map<string, RequestAnswer>()));
  const cached = cache.get(key);
  if (cached !== undefined) {
    cache.delete(key); // re-insert: most recently used last
    cache.set(key, cached);
    return cached;
  }
  const fresh = engineAnswer(set, call);
  if (fresh.errors.length > 0) return fresh; // errors are rare: keep them out of the cache
  cache.set(key, fresh);
  if (cache.size > MAX_CACHED_ANSWERS) cache.delete(cache.keys().next().value as string);
  return fresh;
}

/** The engine's answer, from the policies direct.ts found satisfied (already in the set's order). */
function answerOf(set: CedarPolicySet, direct: DirectAnswer): RequestAnswer {
  const forbids = direct.forbidIds.map((id) => set.policies.get(id)!);
  return {
    forbids,
    notPermitted: forbids.length === 0 && !direct.permitted && set.hasPermit,
    errors: [],
  };
}

function engineAnswer(
  set: CedarPolicySet,
  call: Parameters<typeof cedarWasm.statefulIsAuthorized>[0],
): RequestAnswer {
  const result = cedarWasm.statefulIsAuthorized(call);
  if (result.type === "failure") {
    return { forbids: [], notPermitted: false, errors: describeErrors(result.errors) };
  }
  const { decision, diagnostics } = result.response;
  const errors = diagnostics.errors.map((e) => `policy ${e.policyId}: ${e.error.message}`);
  const matched = new Set(diagnostics.reason);
  // In the set's order, so "the first forbid" (whose reason is shown) never depends on Cedar's.
  const forbids = [...set.policies.values()].filter(
    (p) => p.effect === "forbid" && matched.has(p.id),
  );
  const notPermitted = decision === "deny" && forbids.length === 0 && set.hasPermit;
  return { forbids, notPermitted, errors };
}

function denied(a: RequestAnswer): boolean {
  return a.forbids.length > 0 || a.notPermitted;
}

function wholeCallVerdict(hook: ModifyingHookName, a: RequestAnswer): Record<string, unknown> {
  const plain = a.forbids.filter((p) => p.approval === undefined);
  if (a.notPermitted) return block("no Cedar permit policy allows this");
  if (plain.length > 0 || hook !== "before_tool_call")
    return block(reasonOf(plain[0] ?? a.forbids[0]));
  return { requireApproval: approvalOf(a.forbids) };
}

function block(reason: string): Record<string, unknown> {
  return { block: true, blockReason: reason };
}

function reasonOf(policy: CedarPolicyInfo | undefined): string {
  if (policy === undefined) return "forbidden by a Cedar policy";
  if (policy.reason === undefined) return `forbidden by Cedar policy ${policy.id}`;
  return `${policy.reason} (Cedar policy ${policy.id})`;
}

/** One request for a person, from every matching @approval forbid (first title, highest severity). */
function approvalOf(policies: readonly CedarPolicyInfo[]): Record<string, unknown> {
  const first = policies[0];
  const request: Record<string, unknown> = { title: first?.approval ?? "Approve this tool call" };
  const reasons = policies.flatMap((p) =>
    p.reason === undefined ? [] : [`${p.reason} (${p.id})`],
  );
  request.description = (reasons.length > 0 ? reasons : policies.map((p) => p.id)).join("; ");
  const severities = policies.flatMap((p) => (p.severity === undefined ? [] : [p.severity]));
  if (severities.length > 0) request.severity = highest(severities);
  return request;
}

function highest(severities: readonly ApprovalSeverity[]): ApprovalSeverity {
  return severities.reduce((a, b) =>
    SEVERITY_ORDER.indexOf(b) > SEVERITY_ORDER.indexOf(a) ? b : a,
  );
}

/** before_llm_call: the tools no policy forbade; after_llm_call: the ids of the calls none forbade. */
function narrowingVerdict(
  input: RequestInput,
  requests: readonly CedarRequest[],
  answers: readonly RequestAnswer[],
): Record<string, unknown> | undefined {
  const forbidden = new Set<string>();
  const forbiddenCalls = new Set<number>();
  requests.forEach((request, i) => {
    const a = answers[i];
    if (a === undefined || !denied(a)) return;
    if (request.target.kind === "tool") forbidden.add(request.target.name);
    if (request.target.kind === "toolCall") forbiddenCalls.add(request.target.index);
  });
  if (input.hook === "before_llm_call" && forbidden.size > 0) {
    const tools = requests.flatMap((r) => (r.target.kind === "tool" ? [r.target.name] : []));
    return { tools: tools.filter((name) => !forbidden.has(name)).map((name) => ({ name })) };
  }
  if (input.hook === "after_llm_call" && forbiddenCalls.size > 0) {
    // Calls without an id cannot be listed: while an allowlist is active they are blocked.
    const allowed = requests.flatMap((r) =>
      r.target.kind === "toolCall" &&
      !forbiddenCalls.has(r.target.index) &&
      r.target.id !== undefined
        ? [{ id: r.target.id }]
        : [],
    );
    return { toolCalls: allowed };
  }
  return undefined;
}

function orderedIds(set: CedarPolicySet, answers: readonly RequestAnswer[]): string[] {
  if (answers.every((a) => a.forbids.length === 0)) return []; // most calls: no walk of the set
  const ids = new Set(answers.flatMap((a) => a.forbids.map((p) => p.id)));
  return [...set.policies.keys()].filter((id) => ids.has(id));
}
