/**
 * Cedar policies, evaluated in the coordinator: a policy of kind `cedar` is pure and sandboxed,
 * so it is decided here beside the worker fan-out, with no round trip. Each registry revision's
 * sets are parsed and type-checked once (by text: an unchanged set survives a revision) and the
 * outcome is recorded like a worker's, its version the set's hash. Session facts are read before
 * and updated after each decision, from the same store.
 */
import type { ModifyingHookName } from "../catalog/catalog.js";
import {
  afterApproval,
  afterDecision,
  afterToolOutput,
  assertCedarTypes,
  decidedCallOf,
  evaluateCedar,
  parseCedarPolicySet,
  type CedarPolicySet,
  type SessionFactStore,
  type SessionFacts,
} from "../cedar/index.js";
import { setImmediate } from "node:timers/promises";
import { CedarSetLoader } from "../cedar/loader.js";
import { preparseSubsets } from "../cedar/scope-index.js";
import type { ActionFacts } from "../facts/index.js";
import type { ApprovalEntry } from "../approvals/entry.js";
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
  /** When the call arrived: the time session windows are counted at (default: now). */
  receivedAt?: Date;
  /**
   * The call's fact set, computed on first need (the coordinator's, the same object for every
   * reader): asked only by a set that reads `context.facts` and by session learning.
   */
  facts?: (() => ActionFacts) | undefined;
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
  /** Revisions are prepared one after another, in the order they arrive. */
  private preparing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly facts: SessionFactStore,
    private readonly loader = new CedarSetLoader(),
  ) {}

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
      now: call.receivedAt?.getTime() ?? Date.now(),
      vocabulary: snapshot.vocabulary, // built once per revision, with the registry's own tools
      facts: readsFacts(set) ? call.facts?.() : undefined,
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
   * Parse and type-check every Cedar set of a revision before it comes into force, off the
   * decision path: each new set goes through the load thread (src/cedar/loader.ts, under a time
   * budget), and only its pre-parsing, bounded by the set limits, runs on this thread, one set at
   * a time with calls decided in between. Sets the revision no longer uses are forgotten. A set
   * that does not load is kept as its error: its policy answers `error` and its failure mode
   * decides. The revision's tool vocabulary is built here too. Revisions are prepared in order.
   */
  prepare(snapshot: RegistrySnapshot): Promise<CedarPreparation> {
    const prepared = this.preparing.then(() => this.prepareInOrder(snapshot));
    this.preparing = prepared.catch(() => undefined);
    return prepared;
  }

  /** Ends the load thread (the coordinator's stop). */
  close(): Promise<void> {
    return this.loader.close();
  }

  private async prepareInOrder(snapshot: RegistrySnapshot): Promise<CedarPreparation> {
    const startedAt = performance.now();
    const before = this.loads;
    const failed: string[] = [];
    void snapshot.vocabulary; // built here, once, not by the revision's first call
    for (const policy of cedarPoliciesOf(snapshot)) {
      let set = this.sets.get(policy.cedar);
      if (set === undefined) {
        set = await loadOffThread(this.loader, policy);
        this.loads++;
      }
      // Here, not on the first call of each hook and tool: a set already held parses only the
      // sub-sets of hooks it was not used on before (scope-index.ts remembers the others).
      if (!(set instanceof Error)) set = await preparsedOrError(set, policy.hooks);
      this.sets.set(policy.cedar, set);
      if (set instanceof Error) failed.push(policy.name);
    }
    if (snapshot.revision > this.revision) this.swap(snapshot);
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
   * What a decided call taught about its session (after its record is stored), learnt from the
   * MERGED decision: a block by a code worker is a refusal, a Cedar allow that a worker blocked
   * is not a call. Undefined, not a promise, when it taught nothing (most hooks: the decision
   * path awaits only real work). One `update` per call: the store applies it atomically.
   */
  decided(
    call: CedarCall,
    decision: Readonly<Record<string, unknown>>,
    vocabulary: ToolVocabulary,
  ): Promise<void> | undefined {
    const learnt = decidedCallOf({
      hook: call.hook,
      event: call.event,
      decision,
      at: call.receivedAt?.getTime() ?? Date.now(),
      vocabulary,
      // No Cedar set: no rule reads hosts or domains (docs/cedar.md), so no facts are computed.
      facts: this.sets.size > 0 ? call.facts : undefined,
      learnContacted: this.sets.size > 0,
    });
    if (learnt === undefined) return undefined;
    return this.facts.update(call.agentId, call.sessionKey, (f) => afterDecision(f, learnt));
  }

  /** An approval request of the session was settled (its record stored). */
  settled(entry: Pick<ApprovalEntry, "agentId" | "sessionKey" | "settlement">): Promise<void> {
    const resolution = entry.settlement?.resolution ?? "";
    return this.facts.update(entry.agentId, entry.sessionKey, (f) => afterApproval(f, resolution));
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

/** Whether a set's (pruned) context keeps `context.facts` (src/cedar/context-keys.ts). */
function readsFacts(set: CedarPolicySet): boolean {
  return set.contextKeys === "all" || set.contextKeys.children.has("facts");
}

async function loadOffThread(
  loader: CedarSetLoader,
  policy: CedarPolicy,
): Promise<CedarPolicySet | Error> {
  try {
    return await loader.load(policy.cedar, policy.source ?? policy.name);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * The set with every sub-set its hooks can need pre-parsed into this thread's engine, calls
 * decided between two of them; an error (its failure mode decides) when that fails.
 */
async function preparsedOrError(
  set: CedarPolicySet,
  hooks: readonly string[],
): Promise<CedarPolicySet | Error> {
  try {
    await preparseSubsets(set, hooks, () => setImmediate());
    return set;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * On the calling thread: only for a set `prepare` did not load (a call under a revision that was
 * never prepared, as when a CallHandler is used without a coordinator). Bounded by the set limits.
 */
function load(policy: CedarPolicy): CedarPolicySet | Error {
  try {
    const set = parseCedarPolicySet(policy.cedar, policy.source ?? policy.name);
    assertCedarTypes(set); // a set stored without `registry apply` is checked here too
    return set;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
