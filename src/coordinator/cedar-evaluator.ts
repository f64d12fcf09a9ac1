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
import { MAX_DESCRIBED_POLICIES, type CedarSetState } from "../observability/discovery-schema.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import type { RegistryPolicy } from "../registry/document.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import type { ToolVocabulary } from "../vocabulary/vocabulary.js";

type CedarPolicy = RegistryPolicy & { cedar: string };

export interface CedarCall {
  hook: ModifyingHookName;
  context: Readonly<Record<string, unknown>>;
  event: Readonly<Record<string, unknown>>;
  agentId: string;
  sessionKey: string;
}

/** What preparing a revision's Cedar sets did: sets parsed, policies whose set failed, time. */
export interface CedarPreparation {
  loaded: number;
  failed: string[];
  ms: number;
}

function cedarPoliciesOf(snapshot: RegistrySnapshot): CedarPolicy[] {
  return snapshot.document.policies.filter(
    (p): p is CedarPolicy => p.kind === "cedar" && typeof p.cedar === "string" && p.cedar !== "",
  );
}

export class CedarEvaluator {
  /** Parsed sets of the revision in force, by text; a failed parse or type check is kept as its error. */
  private sets = new Map<string, CedarPolicySet | Error>();
  private revision = -1;
  /** Sets parsed so far (each parse costs the engine's time: see prepare). */
  private loads = 0;

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
    const input = {
      hook: call.hook,
      context: call.context,
      event: call.event,
      session,
      vocabulary: snapshot.vocabulary, // built once per revision, with the registry's own tools
    };
    const result = evaluateCedar(set, input);
    outcome.version = set.hash;
    outcome.status = result.status;
    if (result.verdict !== undefined) outcome.verdict = result.verdict;
    if (result.error !== undefined) outcome.error = result.error;
    outcome.latencyMs = performance.now() - startedAt;
    return outcome;
  }

  /**
   * Parse and type-check every Cedar set of a revision before it comes into force. Parsing a set
   * takes tens to hundreds of milliseconds of the engine's time (more for the first, which starts
   * it); done here, once per revision, no call pays it on the decision path. Sets the revision no
   * longer uses are forgotten. A set that does not load is kept as its error: its policy answers
   * `error` and its failure mode decides. The revision's tool vocabulary is built here too.
   */
  prepare(snapshot: RegistrySnapshot): CedarPreparation {
    const startedAt = performance.now();
    const before = this.loads;
    const failed: string[] = [];
    void snapshot.vocabulary; // built here, once, not by the revision's first call
    if (snapshot.revision > this.revision) this.swap(snapshot);
    for (const policy of cedarPoliciesOf(snapshot)) {
      if (this.setFor(policy, snapshot) instanceof Error) failed.push(policy.name);
    }
    return { loaded: this.loads - before, failed, ms: performance.now() - startedAt };
  }

  /**
   * Each Cedar policy of a revision as this coordinator holds it (discovery, `hookbus status`):
   * read only, so asking never parses a set; a revision older than the sets held reads as loading.
   */
  describeSets(snapshot: RegistrySnapshot): CedarSetState[] {
    return cedarPoliciesOf(snapshot)
      .slice(0, MAX_DESCRIBED_POLICIES)
      .map((policy) => {
        const set = snapshot.revision === this.revision ? this.sets.get(policy.cedar) : undefined;
        if (set === undefined) return { policy: policy.name, state: "loading" };
        if (set instanceof Error) {
          const { code, message } = toWireError(set);
          return {
            policy: policy.name,
            state: "failed",
            error: { code, message: message.slice(0, 1024) },
          };
        }
        return { policy: policy.name, state: "loaded", hash: set.hash };
      });
  }

  private setFor(policy: CedarPolicy, snapshot: RegistrySnapshot): CedarPolicySet | Error {
    // Only a newer revision swaps: a call still running under an older one must not make the
    // sets of the revision in force be parsed again.
    if (snapshot.revision > this.revision) this.swap(snapshot);
    let set = this.sets.get(policy.cedar);
    if (set === undefined) {
      set = load(policy);
      this.loads++;
      this.sets.set(policy.cedar, set);
    }
    return set;
  }

  /** A new revision: keep the sets it still uses, forget the rest (bounded by the registry). */
  private swap(snapshot: RegistrySnapshot): void {
    const texts = new Set(cedarPoliciesOf(snapshot).map((p) => p.cedar));
    for (const text of this.sets.keys()) if (!texts.has(text)) this.sets.delete(text);
    this.revision = snapshot.revision;
  }

  /**
   * What a decided call taught about its session (after its record is stored); undefined, not a
   * promise, when it taught nothing (most hooks: the decision path awaits only real work).
   */
  decided(call: CedarCall, outcome: string, vocabulary: ToolVocabulary): Promise<void> | undefined {
    if (outcome === "block") return undefined;
    if (call.hook !== "before_tool_call" && call.hook !== "before_tool_result") return undefined;
    const name = call.event.toolName;
    if (typeof name !== "string") return undefined;
    const tool = vocabulary.classify(name);
    return call.hook === "before_tool_call"
      ? this.facts.update(call.agentId, call.sessionKey, (f) => afterToolCall(f, tool))
      : this.facts.update(call.agentId, call.sessionKey, (f) => afterToolOutput(f, tool));
  }

  /** An after_tool_call observation: the tool ran and its output reached the agent. */
  async observed(
    agentId: string,
    sessionKey: string,
    event: Record<string, unknown>,
    vocabulary: ToolVocabulary,
  ): Promise<void> {
    if (event.blocked === true || typeof event.toolName !== "string") return;
    const tool = vocabulary.classify(event.toolName);
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
