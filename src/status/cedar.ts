/**
 * `hookbus status` for Cedar entries, as pure analysis. A Cedar policy has no worker: each
 * coordinator evaluates it in-process, so it is healthy when every live coordinator on the
 * registry's revision reports the set loaded with the hash of the registry's own text. Every
 * other state is a problem that names the coordinator and the command that fixes it.
 */
import { cedarSetHash } from "../cedar/set-hash.js";
import type { CedarSetState, CoordinatorDescription } from "../observability/discovery-schema.js";
import type { RegistryPolicy } from "../registry/document.js";

export interface CedarEntryStatus {
  /** The hash of the registry's text for this set (what every coordinator must report). */
  hash: string;
  /** Live coordinators that evaluate exactly this set. */
  loadedIn: number;
  /** Live coordinators. */
  coordinators: number;
}

type CedarPolicy = RegistryPolicy & { cedar: string };

const short = (hash: string) => hash.slice(0, 19);
/** A problem is one line of `hookbus status` (engine messages span several). */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** One coordinator's holding of one set: undefined when it evaluates exactly the registry's text. */
function holdingProblem(
  policy: CedarPolicy,
  hash: string,
  coordinator: CoordinatorDescription & { cedar: CedarSetState[] },
): string | undefined {
  const held = coordinator.cedar.find((s) => s.policy === policy.name);
  const where = `Cedar policy "${policy.name}" in coordinator "${coordinator.id}"`;
  const failMode = `every call to ${policy.hooks.join(", ")} gets its failure mode (${policy.failMode ?? "hook default"})`;
  if (held === undefined)
    return `${where}: not held although its registry revision lists it: restart the coordinator (it loads the revision in force at start)`;
  if (held.state === "failed")
    return `${where} does not load (${held.error?.code ?? "no code"}: ${oneLine(held.error?.message ?? "no message")}): ${failMode}; fix it (hookbus policy validate FILE) and apply it again: hookbus registry apply FILE`;
  if (held.state === "loading")
    return `${where} is still loading: not confirmed yet; run hookbus status again (hookbus registry apply FILE waits for the load)`;
  if (held.hash !== hash)
    return `${where} evaluates set ${short(held.hash ?? "?")}…, the registry holds ${short(hash)}…: restart the coordinator`;
  return undefined;
}

/**
 * A Cedar entry against the live coordinators. Coordinators on another revision, or too old to
 * report their sets, are left out here: buildStatusReport names each of them once.
 */
export function cedarEntryStatus(
  policy: CedarPolicy,
  registryRevision: number,
  coordinators: readonly CoordinatorDescription[],
): CedarEntryStatus & { problems: string[] } {
  const hash = cedarSetHash(policy.cedar);
  const problems: string[] = [];
  let loadedIn = 0;
  for (const coordinator of coordinators) {
    if (coordinator.registryRevision !== registryRevision || coordinator.cedar === undefined)
      continue;
    const problem = holdingProblem(policy, hash, { ...coordinator, cedar: coordinator.cedar });
    if (problem === undefined) loadedIn++;
    else problems.push(problem);
  }
  return { hash, loadedIn, coordinators: coordinators.length, problems };
}

/** Coordinators that cannot confirm any Cedar set: they predate the report (one line each). */
export function unreportedCedarProblems(
  coordinators: readonly CoordinatorDescription[],
  cedarPolicies: number,
): string[] {
  if (cedarPolicies === 0) return [];
  return coordinators
    .filter((c) => c.cedar === undefined)
    .map(
      (c) =>
        `coordinator "${c.id}" (hookbus ${c.hookbus}) does not report its Cedar sets, so ${cedarPolicies} Cedar polic${cedarPolicies === 1 ? "y is" : "ies are"} unconfirmed there: upgrade it and restart it (hookbus coordinator)`,
    );
}
