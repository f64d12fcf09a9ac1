/**
 * Cedar policies, evaluated in the coordinator: a policy of kind `cedar` is pure and sandboxed,
 * so it is decided here beside the worker fan-out, with no round trip. Each registry revision's
 * sets are parsed and type-checked once (by text: an unchanged set survives a revision) and the
 * outcome is recorded like a worker's, its version the set's hash. Session facts are read before
 * and updated after each decision, from the same store.
 */
import type { ModifyingHookName } from "../catalog/catalog.js";
import {
  afterToolCall,
  afterToolOutput,
  assertCedarTypes,
  evaluateCedar,
  parseCedarPolicySet,
  type CedarPolicySet,
  type SessionFactStore,
  type SessionFacts,
} from "../cedar/index.js";
import { toWireError } from "./failure-record.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import type { RegistryPolicy } from "../registry/document.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import { toolVocabulary } from "../vocabulary/vocabulary.js";

type CedarPolicy = RegistryPolicy & { cedar: string };

export interface CedarCall {
  hook: ModifyingHookName;
  context: Readonly<Record<string, unknown>>;
  event: Readonly<Record<string, unknown>>;
  agentId: string;
  sessionKey: string;
}

export class CedarEvaluator {
  /** Parsed sets of the revision in force, by text; a failed parse or type check is kept as its error. */
  private sets = new Map<string, CedarPolicySet | Error>();
  private revision = -1;

  constructor(private readonly facts: SessionFactStore) {}

  /** One outcome per Cedar policy, in the order given (the merge orders them). */
  async evaluate(
    policies: readonly CedarPolicy[],
    call: CedarCall,
    snapshot: RegistrySnapshot,
  ): Promise<PolicyOutcomeInput[]> {
    if (policies.length === 0) return [];
    const session = await this.facts.read(call.agentId, call.sessionKey);
    return policies.map((policy) => this.outcome(policy, call, session, snapshot));
  }

  private outcome(
    policy: CedarPolicy,
    call: CedarCall,
    session: SessionFacts,
    snapshot: RegistrySnapshot,
  ): PolicyOutcomeInput {
    const startedAt = performance.now();
    // Field by field in one order, no `{ ...base, … }` or `{ ...call, session }`: on Node 20's
    // V8 a spread followed by more properties costs microseconds (docs/performance.md), and
    // `call` is the whole admitted call. Cedar reads only the hook, context, event and session.
    const outcome = { policy: policy.name } as PolicyOutcomeInput;
    outcome.priority = policy.priority;
    outcome.mode = policy.mode;
    if (policy.failMode !== undefined) outcome.failMode = policy.failMode;
    const set = this.setFor(policy, snapshot);
    if (set instanceof Error) {
      outcome.status = "error";
      outcome.error = toWireError(set);
      outcome.latencyMs = 0;
      return outcome;
    }
    const input = { hook: call.hook, context: call.context, event: call.event, session };
    const result = evaluateCedar(set, input);
    outcome.version = set.hash;
    outcome.status = result.status;
    if (result.verdict !== undefined) outcome.verdict = result.verdict;
    if (result.error !== undefined) outcome.error = result.error;
    outcome.latencyMs = performance.now() - startedAt;
    return outcome;
  }

  private setFor(policy: CedarPolicy, snapshot: RegistrySnapshot): CedarPolicySet | Error {
    if (snapshot.revision !== this.revision) this.swap(snapshot);
    let set = this.sets.get(policy.cedar);
    if (set === undefined) {
      set = load(policy);
      this.sets.set(policy.cedar, set);
    }
    return set;
  }

  /** A new revision: keep the sets it still uses, forget the rest (bounded by the registry). */
  private swap(snapshot: RegistrySnapshot): void {
    const texts = new Set(
      snapshot.document.policies.flatMap((p) => (p.kind === "cedar" && p.cedar ? [p.cedar] : [])),
    );
    for (const text of this.sets.keys()) if (!texts.has(text)) this.sets.delete(text);
    this.revision = snapshot.revision;
  }

  /**
   * What a decided call taught about its session (after its record is stored); undefined, not a
   * promise, when it taught nothing (most hooks: the decision path awaits only real work).
   */
  decided(call: CedarCall, outcome: string): Promise<void> | undefined {
    if (outcome === "block") return undefined;
    if (call.hook !== "before_tool_call" && call.hook !== "before_tool_result") return undefined;
    const name = call.event.toolName;
    if (typeof name !== "string") return undefined;
    const tool = toolVocabulary.classify(name);
    return call.hook === "before_tool_call"
      ? this.facts.update(call.agentId, call.sessionKey, (f) => afterToolCall(f, tool))
      : this.facts.update(call.agentId, call.sessionKey, (f) => afterToolOutput(f, tool));
  }

  /** An after_tool_call observation: the tool ran and its output reached the agent. */
  async observed(
    agentId: string,
    sessionKey: string,
    event: Record<string, unknown>,
  ): Promise<void> {
    if (event.blocked === true || typeof event.toolName !== "string") return;
    const tool = toolVocabulary.classify(event.toolName);
    await this.facts.update(agentId, sessionKey, (f) => afterToolOutput(f, tool));
  }
}

function load(policy: CedarPolicy): CedarPolicySet | Error {
  try {
    const set = parseCedarPolicySet(policy.cedar, policy.source ?? policy.name);
    assertCedarTypes(set); // a set stored without `registry apply` is checked here too
    return set;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
