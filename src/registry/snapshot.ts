/**
 * One revision of the registry, indexed for the hot path (policies of a hook, in merge order) and
 * with its tool vocabulary built once (the shipped one plus the document's `toolVocabulary`).
 */
import type { ModifyingHookName } from "../catalog/catalog.js";
import { compareByPriorityThenName } from "../merge/order.js";
import { toolVocabulary, type ToolVocabulary } from "../vocabulary/vocabulary.js";
import type { RegistryPolicy, ValidRegistryDocument } from "./document.js";
import { STREAMED_HOOK, streamsWindows, type ResponseStreaming } from "./stream-entry.js";

export class RegistrySnapshot {
  private readonly byHook = new Map<ModifyingHookName, RegistryPolicy[]>();
  private built: ToolVocabulary | undefined;

  constructor(
    /** The KV revision of the document; 0 when nothing was ever applied. */
    readonly revision: number,
    readonly document: ValidRegistryDocument,
  ) {
    for (const policy of document.policies) {
      for (const hook of policy.hooks) {
        const list = this.byHook.get(hook) ?? [];
        list.push(policy);
        this.byHook.set(hook, list);
      }
    }
    for (const list of this.byHook.values()) {
      list.sort((a, b) =>
        compareByPriorityThenName(
          { priority: a.priority, policy: a.name },
          { priority: b.priority, policy: b.name },
        ),
      );
    }
  }

  /**
   * How the coordinator classifies tools under this revision: Cedar requests, session facts,
   * stops by class. Built on first use (the coordinator's prepare step, before the revision is in
   * force), once: agents and the 250 ms reads of an unchanged key never build it.
   */
  get vocabulary(): ToolVocabulary {
    return (this.built ??= registryVocabulary(this.document));
  }

  static empty(): RegistrySnapshot {
    return new RegistrySnapshot(0, { policies: [] });
  }

  policiesFor(hook: ModifyingHookName): readonly RegistryPolicy[] {
    return this.byHook.get(hook) ?? [];
  }

  hasPolicies(hook: ModifyingHookName): boolean {
    return this.byHook.has(hook);
  }

  /**
   * How a streamed final answer may show under this revision: `edge` with no before_response_emit
   * policy, `windows` when every one of them opted in to windows (`stream: true`), else `hold`.
   */
  responseStreaming(): ResponseStreaming {
    const policies = this.policiesFor(STREAMED_HOOK);
    if (policies.length === 0) return "edge";
    return policies.every(streamsWindows) ? "windows" : "hold";
  }
}

/** The shipped vocabulary with the document's own names and prefixes added (theirs win). */
function registryVocabulary(document: ValidRegistryDocument): ToolVocabulary {
  return document.toolVocabulary === undefined
    ? toolVocabulary
    : toolVocabulary.extend(document.toolVocabulary);
}
