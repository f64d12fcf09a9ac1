import { describe, expect, it } from "vitest";
import { parseRegistryDocument } from "../../../src/registry/document.js";
import type { CedarSetState, DiscoveryReply } from "../../../src/observability/discovery-schema.js";
import { cedarSetHash } from "../../../src/cedar/set-hash.js";
import { buildStatusReport, combineStats } from "../../../src/status/report.js";

const base = {
  hookbus: "0.1.0",
  namespace: "hookbus",
  host: "h",
  pid: 1,
  startedAt: "2026-01-01T00:00:00.000Z",
  inFlight: 0,
};

function worker(
  id: string,
  name: string,
  version: string | undefined,
  hooks: string[],
  count = 0,
): DiscoveryReply {
  return {
    role: "worker",
    id,
    ...base,
    policies: [
      {
        name,
        ...(version === undefined ? {} : { version }),
        hooks,
        stats: Object.fromEntries(
          hooks.map((h) => [h, { count, p50Ms: 1, p99Ms: 2, errorRate: 0 }]),
        ),
      },
    ],
  };
}

const coordinator = (id: string, registryRevision: number): DiscoveryReply => ({
  role: "coordinator",
  id,
  ...base,
  callsHandled: 0,
  registryRevision,
  calls: { count: 0, errorRate: 0 },
  log: { streamLastSeq: 0 },
});

const document = parseRegistryDocument({
  policies: [
    { name: "guard", hooks: ["before_tool_call", "after_llm_call"], priority: 10 },
    { name: "ghost", hooks: ["before_llm_call"], priority: 1, mode: "shadow" },
  ],
});

describe("buildStatusReport", () => {
  it("counts live workers and versions per policy, per hook, and names every problem", () => {
    const report = buildStatusReport(4, document, [
      worker("w1", "guard", "1.0.0", ["before_tool_call"], 3),
      worker("w2", "guard", "1.1.0", ["before_tool_call"], 1),
      worker("w3", "stray", undefined, ["before_tool_call"]),
      coordinator("c1", 4),
      coordinator("c2", 3),
    ]);
    expect(report.policies[0]).toMatchObject({
      name: "guard",
      alive: true,
      workers: 2,
      versions: ["1.0.0", "1.1.0"],
      hooks: [
        { hook: "before_tool_call", workers: 2, stats: { count: 4 } },
        { hook: "after_llm_call", workers: 0, stats: { count: 0 } },
      ],
    });
    expect(report.policies[1]).toMatchObject({
      name: "ghost",
      mode: "shadow",
      alive: false,
      workers: 0,
    });
    expect(report.undeclared).toEqual(["stray"]);
    expect(report.problems).toEqual([
      expect.stringContaining(
        'policy "guard" is declared for after_llm_call but no live worker handles it: start a worker',
      ),
      expect.stringContaining('policy "ghost" has NO live worker'),
      expect.stringContaining(
        'coordinator "c2" decides with registry revision 3, the registry is at 4: if it stays behind',
      ),
    ]);
  });

  it("reports a namespace with nothing running: no registry, no coordinator alive", () => {
    const report = buildStatusReport(0, { policies: [] }, []);
    expect(report.problems).toEqual([
      "no registry was ever applied in this namespace: agents' calls are refused (HOOKBUS_NO_REGISTRY) until one is: hookbus registry apply FILE",
      "no coordinator is alive: agents' calls fail; start one: hookbus coordinator",
    ]);
  });
});

describe("buildStatusReport: a coordinator that is silent is not an absent one", () => {
  it("says so when something listens for coordinators and none answered", () => {
    const silent = buildStatusReport(4, document, [], { coordinatorsSilent: true });
    expect(silent.problems.filter((p) => p.includes("coordinator"))).toEqual([
      expect.stringMatching(
        /^no coordinator answered, yet something listens for coordinators: .*hookbus status --wait 10000$/,
      ),
    ]);
    const absent = buildStatusReport(4, document, []);
    expect(absent.problems).toContain(
      "no coordinator is alive: agents' calls fail; start one: hookbus coordinator",
    );
  });
});

describe("combineStats", () => {
  it("sums counts, keeps the slowest worker's percentiles and weights the error rate", () => {
    expect(
      combineStats([
        { count: 30, p50Ms: 1, p99Ms: 9, errorRate: 0.1 },
        { count: 10, p50Ms: 4, p99Ms: 5, errorRate: 0.5 },
        { count: 0, errorRate: 0 },
      ]),
    ).toEqual({ count: 40, p50Ms: 4, p99Ms: 9, errorRate: 0.2 });
  });

  it("names a coordinator that does not sign while others do, and nothing when none signs", () => {
    const signing = { ...coordinator("c1", 4), signingKey: "A".repeat(56) } as DiscoveryReply;
    const unsigned = coordinator("c2", 4);
    const workers = [worker("w1", "guard", "1", ["before_tool_call", "after_llm_call"])];
    const mixed = buildStatusReport(4, document, [...workers, signing, unsigned]);
    expect(mixed.problems.filter((p) => p.includes("sign"))).toEqual([
      expect.stringMatching(/^coordinator "c2" does not sign the records it writes/),
    ]);
    const none = buildStatusReport(4, document, [...workers, unsigned, coordinator("c3", 4)]);
    expect(none.problems.filter((p) => p.includes("sign"))).toEqual([]);
  });
});

describe("buildStatusReport: Cedar entries are checked in the coordinators, not as workers", () => {
  const text = 'forbid (principal, action, resource) when { context.toolName == "exec" };';
  const mixed = parseRegistryDocument({
    policies: [
      { name: "guard", hooks: ["before_tool_call"], priority: 10 },
      { name: "rules", hooks: ["before_tool_call"], priority: 20, kind: "cedar", cedar: text },
    ],
  });
  const hash = cedarSetHash(text);
  const holding = (id: string, cedar: CedarSetState[] | undefined, revision = 4) =>
    ({ ...coordinator(id, revision), ...(cedar === undefined ? {} : { cedar }) }) as DiscoveryReply;
  const loaded: CedarSetState[] = [{ policy: "rules", state: "loaded", hash }];
  const guardWorker = worker("w1", "guard", "1", ["before_tool_call"]);

  it("a set loaded with the registry's hash in every live coordinator is healthy", () => {
    const report = buildStatusReport(4, mixed, [
      guardWorker,
      holding("c1", loaded),
      holding("c2", loaded),
    ]);
    expect(report.problems).toEqual([]);
    expect(report.policies[1]).toMatchObject({
      name: "rules",
      kind: "cedar",
      alive: true,
      versions: [hash],
      cedar: { hash, loadedIn: 2, coordinators: 2 },
    });
    expect(report.undeclared).toEqual([]);
  });

  it("names every coordinator that does not evaluate exactly the registry's set, with the fix", () => {
    const report = buildStatusReport(4, mixed, [
      guardWorker,
      holding("c1", loaded),
      holding("c2", [
        {
          policy: "rules",
          state: "failed",
          error: { code: "HOOKBUS_INVALID_CEDAR", message: "bad" },
        },
      ]),
      holding("c3", [{ policy: "rules", state: "loading" }]),
      holding("c4", [{ policy: "rules", state: "loaded", hash: cedarSetHash("other") }]),
      holding("c5", []),
      holding("c6", undefined),
    ]);
    expect(report.policies[1]).toMatchObject({
      alive: false,
      cedar: { loadedIn: 1, coordinators: 6 },
    });
    expect(report.problems).toEqual([
      expect.stringMatching(
        /^Cedar policy "rules" in coordinator "c2" does not load \(HOOKBUS_INVALID_CEDAR: bad\).*hookbus registry apply FILE$/,
      ),
      expect.stringMatching(/"c3" is still loading.*hookbus status again/),
      expect.stringMatching(/"c4" evaluates set sha256:.*restart the coordinator$/),
      expect.stringMatching(/"c5": not held .*restart the coordinator/),
      expect.stringMatching(
        /^coordinator "c6" \(hookbus 0\.1\.0\) does not report its Cedar sets.*upgrade it/,
      ),
    ]);
  });

  it("a coordinator on another revision is named once, not once per set", () => {
    const report = buildStatusReport(4, mixed, [guardWorker, holding("c1", loaded, 3)]);
    expect(report.problems).toEqual([
      expect.stringContaining('coordinator "c1" decides with registry revision 3'),
    ]);
    expect(report.policies[1]).toMatchObject({ alive: false, cedar: { loadedIn: 0 } });
  });

  it("a worker serving a name declared as Cedar is never asked, and said so", () => {
    const report = buildStatusReport(4, mixed, [
      guardWorker,
      worker("w2", "rules", "1", ["before_tool_call"]),
      holding("c1", loaded),
    ]);
    expect(report.undeclared).toEqual(["rules"]);
    expect(report.problems).toEqual([]);
  });
});
