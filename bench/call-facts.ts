/**
 * `npx tsx bench/call-facts.ts`: what the coordinator's one fact set per call costs on the
 * decision path (src/policy/call-facts.ts): wall time of `callFacts` per call, and what the
 * facts add to the policy request's JSON (bytes, and the time to encode them), for the shell
 * corpus of test/unit/facts/shell/corpus/ as Bash calls and a few other call shapes. Each shape
 * is timed ROUNDS times over its inputs; the table gives p50 and p99 over every timed call.
 */
import { readFileSync } from "node:fs";
import { callFacts, loadCallFacts } from "../src/policy/call-facts.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const corpus = JSON.parse(
  readFileSync(new URL("../test/unit/facts/shell/corpus/commands.json", import.meta.url), "utf8"),
) as string[];

interface Call {
  hook: string;
  event: Record<string, unknown>;
}
const context = { agentId: "bench", sessionKey: "s", cwd: "/home/dev/app", home: "/home/dev" };
const shapes: Record<string, Call[]> = {
  "before_tool_call Bash (corpus)": corpus.map((command) => ({
    hook: "before_tool_call",
    event: { toolName: "Bash", toolCallId: "t", params: { command } },
  })),
  "before_tool_call other tools": [
    { toolName: "Read", params: { file_path: "/home/dev/.ssh/id_rsa" } },
    { toolName: "WebFetch", params: { url: "http://169.254.169.254/latest/meta-data/" } },
    { toolName: "send_email", params: { to: "a@example.com, b@evil.example", body: "hi" } },
    { toolName: "mcp__github__delete_repo", params: { owner: "o", repo: "r" } },
  ].map((event) => ({ hook: "before_tool_call", event: { toolCallId: "t", ...event } })),
  "after_llm_call, 3 tool calls": [
    {
      hook: "after_llm_call",
      event: {
        toolCalls: corpus.slice(0, 3).map((command, i) => ({
          id: `c${i}`,
          name: "Bash",
          arguments: JSON.stringify({ command }),
        })),
      },
    },
  ],
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

await loadCallFacts();
const rows = [];
for (const [shape, calls] of Object.entries(shapes)) {
  for (const call of calls) callFacts(call.hook, call.event, context); // warm up
  const factsUs: number[] = [];
  const encodeUs: number[] = [];
  let bytesWithout = 0;
  let bytesWith = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const call of calls) {
      const started = performance.now();
      const facts = callFacts(call.hook, call.event, context);
      factsUs.push((performance.now() - started) * 1000);
      const body = { callId: "c", hook: call.hook, context, event: call.event };
      const plain = performance.now();
      const without = JSON.stringify(body);
      const between = performance.now();
      const withFacts = JSON.stringify({ ...body, facts });
      encodeUs.push((performance.now() - between - (between - plain)) * 1000);
      if (round === 0) {
        bytesWithout += without.length;
        bytesWith += withFacts.length;
      }
    }
  }
  // CPU per call, facts only: on a shared machine wall time includes waiting for a core.
  const cpuBefore = process.cpuUsage();
  for (let round = 0; round < ROUNDS; round++)
    for (const call of calls) callFacts(call.hook, call.event, context);
  const cpu = process.cpuUsage(cpuBefore);
  const cpuUs = (cpu.user + cpu.system) / (ROUNDS * calls.length);
  factsUs.sort((a, b) => a - b);
  encodeUs.sort((a, b) => a - b);
  rows.push({
    shape,
    calls: factsUs.length,
    facts_p50_us: percentile(factsUs, 0.5).toFixed(1),
    facts_p99_us: percentile(factsUs, 0.99).toFixed(1),
    facts_max_ms: (factsUs.at(-1)! / 1000).toFixed(2),
    facts_cpu_us: cpuUs.toFixed(1),
    encode_extra_p50_us: percentile(encodeUs, 0.5).toFixed(1),
    body_bytes: Math.round(bytesWithout / calls.length),
    with_facts_bytes: Math.round(bytesWith / calls.length),
  });
}
console.table(rows);
