/**
 * `node .tmp/bench/bench/depth-scan.js` (after `tsc -p tsconfig.bench.json`): the Node CPU of the
 * JSON depth scan that runs before every parse on the decision path, on the bodies of one
 * `npm run bench` call (the call, the policy request with its facts, three verdicts, the
 * decision), against the scan as first written (test/support/depth-reference.ts). Rounds
 * alternate between the two; the line gives ns per body, median of the rounds.
 */
import { randomUUID } from "node:crypto";
import { computeActionFacts } from "../src/facts/index.js";
import { DEFAULT_LIMITS, jsonDepthExceeds } from "../src/foundation/limits.js";
import { referenceDepthExceeds } from "../test/support/depth-reference.js";
import { BENCH_EVENT, laneContext } from "./support/decision-path.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const REPEAT = 2_000;

function benchBodies(): Uint8Array[] {
  const call = {
    callId: randomUUID(),
    hook: "before_tool_call",
    context: laneContext(0),
    event: BENCH_EVENT,
  };
  const request = { ...call, facts: computeActionFacts(call.hook, BENCH_EVENT) };
  const verdicts = ["p1", "p2", "p3"].map((policy) => ({ policy, version: "1" }));
  const decision = {
    callId: call.callId,
    hook: call.hook,
    decision: { outcome: "allow" },
    registryRevision: 3,
    recordSeq: 12_345,
  };
  return [call, request, ...verdicts, decision].map((body) => Buffer.from(JSON.stringify(body)));
}

function nsPerBody(scan: (bytes: Uint8Array, max: number) => boolean, bodies: Uint8Array[]) {
  const before = process.cpuUsage();
  let deep = 0;
  for (let r = 0; r < REPEAT; r++)
    for (const body of bodies) if (scan(body, DEFAULT_LIMITS.maxDepth)) deep++;
  const cpu = process.cpuUsage(before);
  if (deep > 0) throw new Error("a benchmark body counted as too deep");
  return ((cpu.user + cpu.system) * 1000) / (REPEAT * bodies.length);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

const bodies = benchBodies();
const before: number[] = [];
const after: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  before.push(nsPerBody(referenceDepthExceeds, bodies));
  after.push(nsPerBody(jsonDepthExceeds, bodies));
}
const bytes = bodies.reduce((sum, body) => sum + body.length, 0);
console.log(
  `depth-scan: bodies=${bodies.length} bytes=${bytes} reference_ns=${median(before).toFixed(0)} ` +
    `now_ns=${median(after).toFixed(0)} ratio=${(median(after) / median(before)).toFixed(2)}`,
);
