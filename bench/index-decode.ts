/**
 * `npx tsx bench/index-decode.ts`: the indexer's decode alone, CPU µs per record of synthetic
 * log records (test/support/synthetic-log.ts, about 0.9 KB each): the full decode (the codec's
 * depth check and JSON.parse, then the projection) against the one-pass read of the columns'
 * fields (projectBytes), in interleaved rounds in one process. BENCH_DECODE_RECORDS (default 50,000).
 */
import { BodyCodec } from "../src/bus/codec.js";
import { projectBytes, projectRecord } from "../src/indexer/projection.js";
import { syntheticRecord } from "../test/support/synthetic-log.js";

const N = Number(process.env.BENCH_DECODE_RECORDS ?? 50_000);
const codec = new BodyCodec(undefined);
const stored = {
  seq: 1,
  subject: "bench.audit.a.s.before_tool_call.allow",
  storedAt: new Date(),
  address: { agentId: "a", sessionKey: "s", hook: "before_tool_call", kind: "allow" as const },
};
const bodies = Array.from({ length: N }, (_, i) =>
  new TextEncoder().encode(JSON.stringify(syntheticRecord(i, { sessions: 2000 }).record)),
);

function cpuUs(fn: (body: Uint8Array) => unknown): number {
  const t0 = process.cpuUsage();
  for (const body of bodies) fn(body);
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / N;
}

const full = (body: Uint8Array) =>
  projectRecord(stored, codec.decodeMessageNow({ data: body }), Buffer.from(body).toString());
const scan = (body: Uint8Array) => projectBytes(stored, body, codec.limits.maxDepth);
cpuUs(full);
cpuUs(scan);
const rounds: string[] = [];
for (let round = 0; round < 5; round++)
  rounds.push(`full ${cpuUs(full).toFixed(2)} / scan ${cpuUs(scan).toFixed(2)}`);
console.log(`decode µs per record (${N} records), per round: ${rounds.join("; ")}`);
