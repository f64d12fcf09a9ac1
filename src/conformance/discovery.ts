/**
 * Discovery (docs/protocol.md, "Discovery"): a live worker, in any language, describes itself on
 * `<ns>.discover` and `<ns>.discover.worker`, once per process, with the policy it serves and the
 * handler's recent stats; `hookbus status` and the coordinators' liveness checks count on it.
 */
import { discover, workersByPolicy } from "../observability/discovery.js";
import type { Case } from "./cases.js";
import { equal, fail, verdictOf } from "./expect.js";
import { action } from "./samples.js";
import type { Setup } from "./setup.js";

async function workerDescriptions(setup: Setup, role?: "worker" | "coordinator") {
  const found = await discover(setup.nc, setup.namespace, role === undefined ? {} : { role });
  if (found.invalid > 0)
    fail(`${found.invalid} discovery replies do not match schemas/discovery/reply.schema.json`);
  return found.replies.filter((r) => r.role === "worker");
}

export const DISCOVERY_CASES: Case[] = [
  {
    name: "discovery: the worker describes itself, its policy and its recent answers",
    async run(setup) {
      const { probe } = setup;
      verdictOf(
        await probe.ask({
          hook: "before_tool_call",
          body: action("conformance_other", {}),
          timeoutMs: 2000,
        }),
        probe.policy,
        "before_tool_call",
      );
      const workers = await workerDescriptions(setup, "worker");
      const serving = workers.filter((w) => w.policies.some((p) => p.name === probe.policy));
      if (serving.length !== 1)
        fail(`${serving.length} workers of "${probe.policy}" answered discovery (one is running)`);
      const described = serving[0]!;
      equal(described.namespace, setup.namespace, "namespace");
      const policy = described.policies.find((p) => p.name === probe.policy)!;
      if (!policy.hooks.includes("before_tool_call"))
        fail(`hooks ${JSON.stringify(policy.hooks)} leave out before_tool_call`);
      const stats = policy.stats["before_tool_call"];
      if (stats === undefined || stats.count < 1)
        fail(`stats of before_tool_call count no answer: ${JSON.stringify(stats)}`);
      for (const hook of Object.keys(policy.stats)) {
        if (!policy.hooks.includes(hook))
          fail(`stats for ${hook}, a hook the policy does not list`);
      }
      equal(workersByPolicy(workers).get(probe.policy)?.count, 1, "live workers of the policy");
    },
  },
  {
    name: "discovery: the worker answers the subject for all roles, and not the coordinators'",
    async run(setup) {
      const everyone = await workerDescriptions(setup);
      if (!everyone.some((w) => w.policies.some((p) => p.name === setup.probe.policy)))
        fail(`no worker of "${setup.probe.policy}" answered ${setup.namespace}.discover`);
      const coordinators = await discover(setup.nc, setup.namespace, { role: "coordinator" });
      if (coordinators.replies.some((r) => r.role === "worker") || coordinators.invalid > 0)
        fail(`a worker answered ${setup.namespace}.discover.coordinator`);
    },
  },
];
