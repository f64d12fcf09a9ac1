/**
 * `node .tmp/bench/bench/body-parse.js` (after `tsc -p tsconfig.bench.json`): the Node CPU of
 * what the codec does to every body before JSON.parse, on the bodies of one `npm run bench` call
 * (the call, the policy request with its facts, three verdicts, the decision): the depth scan,
 * against the scan as first written (test/support/depth-reference.ts), and the UTF-8 decode,
 * against the Buffer view and `toString` it replaced; and the key-twice check's two halves
 * (foundation/json-keys.ts): the scan that also counts members (`scan_members`, against
 * `scan_now`) and the count of the parsed value's keys (`walk_members`; the parse not included).
 * Rounds alternate between the ways; the line gives ns per body, medians of the rounds.
 */
import { randomUUID } from "node:crypto";
import { computeActionFacts } from "../src/facts/index.js";
import { DEFAULT_LIMITS, jsonDepthExceeds, jsonMembers } from "../src/foundation/limits.js";
import { parsedMembers } from "../src/foundation/json-keys.js";
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

function nsPerBody(work: (bytes: Uint8Array) => unknown, bodies: Uint8Array[]): number {
  const before = process.cpuUsage();
  let kept = 0;
  for (let r = 0; r < REPEAT; r++) for (const body of bodies) if (work(body) === true) kept++;
  const cpu = process.cpuUsage(before);
  if (kept < 0) throw new Error("unreachable: keeps the results alive");
  return ((cpu.user + cpu.system) * 1000) / (REPEAT * bodies.length);
}

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
const parsed = new Map<Uint8Array, unknown>();
const ways = {
  scan_reference: (b: Uint8Array) => referenceDepthExceeds(b, DEFAULT_LIMITS.maxDepth),
  scan_now: (b: Uint8Array) => jsonDepthExceeds(b, DEFAULT_LIMITS.maxDepth),
  scan_members: (b: Uint8Array) => jsonMembers(b, DEFAULT_LIMITS.maxDepth) === 0,
  walk_members: (b: Uint8Array) => parsedMembers(parsed.get(b)) === 0,
  decode_buffer_view: (b: Uint8Array) =>
    Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("utf8").length === 0,
  decode_now: (b: Uint8Array) => utf8.decode(b).length === 0,
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

const bodies = benchBodies();
for (const body of bodies) parsed.set(body, JSON.parse(utf8.decode(body)));
if (
  bodies.some(
    (body) =>
      jsonDepthExceeds(body, DEFAULT_LIMITS.maxDepth) ||
      jsonMembers(body, DEFAULT_LIMITS.maxDepth) !== parsedMembers(parsed.get(body)),
  )
)
  throw new Error("a benchmark body counted as too deep, or as having a key twice");
const rounds = new Map<string, number[]>(Object.keys(ways).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++)
  for (const [name, work] of Object.entries(ways)) rounds.get(name)!.push(nsPerBody(work, bodies));
const bytes = bodies.reduce((sum, body) => sum + body.length, 0);
const ns = (name: string) => median(rounds.get(name)!);
console.log(
  `body-parse: bodies=${bodies.length} bytes=${bytes} ` +
    [...rounds.keys()].map((name) => `${name}_ns=${ns(name).toFixed(0)}`).join(" ") +
    ` scan_ratio=${(ns("scan_now") / ns("scan_reference")).toFixed(2)}` +
    ` decode_ratio=${(ns("decode_now") / ns("decode_buffer_view")).toFixed(2)}`,
);
