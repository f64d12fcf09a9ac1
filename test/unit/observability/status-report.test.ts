import { describe, expect, it } from "vitest";
import { parseRegistryDocument } from "../../../src/registry/document.js";
import type { DiscoveryReply } from "../../../src/observability/discovery-schema.js";
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
      'policy "guard" is declared for after_llm_call but no live worker handles it',
      expect.stringContaining('policy "ghost" has NO live worker'),
      'coordinator "c2" decides with registry revision 3, the registry is at 4',
    ]);
  });

  it("reports a namespace with nothing running: no registry, no coordinator alive", () => {
    const report = buildStatusReport(0, { policies: [] }, []);
    expect(report.problems).toEqual([
      "no registry was ever applied in this namespace: agents' calls are refused (HOOKBUS_NO_REGISTRY) until one is: hookbus registry apply FILE",
      "no coordinator is alive: agents' calls fail",
    ]);
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
