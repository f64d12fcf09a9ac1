/**
 * `npx tsx bench/cedar-stall.ts [RULES]`: how long other sessions' calls wait while a coordinator
 * loads a large Cedar set (issue 31: a 3,000–5,000-rule set stalled every session for 1.5–2.4 s).
 * One nats-server, one coordinator and one agent in this process; the agent decides a read_file
 * call of another session back to back, first for 2 s under a registry of one small set, then
 * while a registry adding a RULES-rule set (default 5,000) is stored straight into the bucket (as
 * `registry apply` would not: it refuses sets over the limits) until the coordinator has it in
 * force, and 1 s more. `npx tsx bench/cedar-stall.ts 1000 unscoped`: rules that every call must
 * read (the whole set is pre-parsed by the first call). The LAST line is machine-readable:
 *   cedar-stall: rules=… shape=… load_ms=… baseline_p50_ms=… baseline_max_ms=… during_p50_ms=… during_max_ms=… calls_during=…
 */
import { findNatsServer } from "../src/testing/nats.js";
import { HookbusClient } from "../src/agent/index.js";
import { startCoordinator } from "../src/coordinator/index.js";
import { Subjects } from "../src/bus/subjects.js";
import { RegistryStore } from "../src/registry/store.js";
import { connect } from "@nats-io/transport-node";

const RULES = Number(process.argv[2] ?? 5000);
/** `scoped`: each rule names its tool in the scope; `unscoped`: in the condition (every call reads all). */
const SHAPE = process.argv[3] === "unscoped" ? "unscoped" : "scoped";
const namespace = `stall${Date.now()}`;
const GUARD = `@id("no-exec") forbid (principal, action == Action::"before_tool_call", resource == Tool::"exec");`;

function bigSet(rules: number): string {
  return Array.from({ length: rules }, (_, i) =>
    SHAPE === "scoped"
      ? `@id("r${i}") forbid (principal, action == Action::"before_tool_call", resource == Tool::"tool${i}") when { context.call.paramsText like "*x${i}*" };`
      : `@id("r${i}") forbid (principal, action == Action::"before_tool_call", resource is Tool) when { resource.name == "tool${i}" && context.call.paramsText like "*x${i}*" };`,
  ).join("\n");
}

function entry(name: string, cedar: string, priority: number) {
  return { name, kind: "cedar" as const, cedar, hooks: ["before_tool_call"], priority };
}

function summary(latencies: number[]): { p50: number; max: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0 };
}

async function main(): Promise<void> {
  const server = await findNatsServer();
  const nc = await connect({ servers: server.url });
  const store = await RegistryStore.open(nc, new Subjects(namespace));
  await store.apply({ policies: [entry("guard", GUARD, 100)] });
  const coordinator = await startCoordinator({
    nc: await connect({ servers: server.url }),
    namespace,
    id: "stall",
  });
  const client = await HookbusClient.connect({
    nc: await connect({ servers: server.url }),
    namespace,
    timeoutMs: 30_000,
  });
  let n = 0;
  const decideOnce = async (): Promise<number> => {
    const startedAt = performance.now();
    n++;
    await client.decide(
      "before_tool_call",
      { agentId: "other", sessionKey: "other-session", runId: `r${n}` },
      { toolName: "read_file", toolCallId: `t${n}`, params: { path: `/tmp/${n}` } },
    );
    return performance.now() - startedAt;
  };
  const baseline: number[] = [];
  for (const end = Date.now() + 2000; Date.now() < end;) baseline.push(await decideOnce());
  const before = coordinator.registry().revision;
  const appliedAt = performance.now();
  const applying = store.apply({
    policies: [entry("guard", GUARD, 100), entry("big", bigSet(RULES), 50)],
  });
  const during: number[] = [];
  let loadMs: number | undefined;
  let end = Infinity;
  while (Date.now() < end) {
    during.push(await decideOnce());
    if (loadMs === undefined && coordinator.registry().revision > before) {
      loadMs = performance.now() - appliedAt;
      end = Date.now() + 1000;
    }
  }
  await applying;
  const b = summary(baseline);
  const d = summary(during);
  process.stdout.write(
    `cedar-stall: rules=${RULES} shape=${SHAPE} load_ms=${loadMs?.toFixed(0)} baseline_p50_ms=${b.p50.toFixed(2)} baseline_max_ms=${b.max.toFixed(1)} during_p50_ms=${d.p50.toFixed(2)} during_max_ms=${d.max.toFixed(1)} calls_during=${during.length}\n`,
  );
  await client.close();
  await coordinator.stop();
  await nc.close();
  await server.stop();
}

await main();
