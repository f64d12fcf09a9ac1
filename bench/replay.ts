/**
 * `npm run bench:replay`: replay throughput on a log of ≥100k decision records.
 *
 * Builds the log on a private nats-server by publishing valid DecisionRecords straight to the
 * log stream (async batches of JetStream publishes, encoded with the bus codec as the
 * coordinator encodes them), then replays them FROM THE LOG (readLog: one streaming consumer, no
 * round trip per record) with 3 in-process policies, one of them stateful. The recorded
 * decisions are the ones these policies make, so the replay finds no change, as a review of an
 * unchanged policy set would. The LAST line is machine-readable:
 *   replay: records=<n> seconds=<s> records_per_second=<r>
 */
import { connect } from "@nats-io/transport-node";
import { Bus } from "../src/bus/bus.js";
import { bodyHeaders } from "../src/bus/codec.js";
import { ensureLogStreams } from "../src/bus/streams.js";
import { connectionOptions } from "../src/bus/connect.js";
import { readLog } from "../src/log/reader.js";
import type { DecisionRecord } from "../src/log/record.js";
import { buildCandidates } from "../src/replay/candidates.js";
import { reevaluate } from "../src/replay/evaluate.js";
import { readSelection, replay, ReplaySummarizer } from "../src/replay/index.js";
import { findNatsServer } from "../src/testing/nats.js";
import { definePolicy } from "../src/policy/policy.js";
import { MemorySessionStateStore } from "../src/policy/state/memory-store.js";

const RECORDS = Number(process.env.BENCH_REPLAY_RECORDS ?? 100_000);
const PER_SESSION = 100;
const IN_FLIGHT = 4000;
const NAMESPACE = "bench-replay";
const AGENT = "bench-agent";

const policies = [
  definePolicy({
    name: "no-shell",
    version: "1",
    hooks: {
      before_tool_call: (e) =>
        e.toolName === "exec" ? { block: true, blockReason: "no shell" } : undefined,
    },
  }),
  definePolicy({
    name: "path-guard",
    version: "1",
    hooks: {
      before_tool_call: (e) =>
        typeof e.params.path === "string" && !e.params.path.startsWith("/srv/")
          ? { params: { ...e.params, path: `/srv/sandbox${e.params.path}` } }
          : undefined,
    },
  }),
  definePolicy({
    name: "budget",
    version: "1",
    hooks: {
      async before_tool_call(_e, _c, { state }) {
        const used = await state.update<number>("calls", (n) => (n ?? 0) + 1);
        return used > 80 ? { block: true, blockReason: "budget used up" } : undefined;
      },
    },
  }),
];
const registry = {
  policies: [
    { name: "no-shell", hooks: ["before_tool_call"], priority: 100 },
    { name: "path-guard", hooks: ["before_tool_call"], priority: 50 },
    { name: "budget", hooks: ["before_tool_call"], priority: 10, failMode: "fail-open" },
  ],
};

const TOOLS = [
  { toolName: "read_file", params: { path: "/srv/data/report.csv", limit: 100 } },
  { toolName: "read_file", params: { path: "/etc/passwd" } },
  { toolName: "web_fetch", params: { url: "https://example.com/pricing" } },
  { toolName: "exec", params: { command: "ls -la" } },
  { toolName: "write_file", params: { path: "/srv/out/summary.md", content: "ok".repeat(40) } },
];

/** Record i: session i / PER_SESSION, a rotating tool. Its decision is filled in by `decide`. */
function input(i: number): DecisionRecord {
  const sessionKey = `session-${Math.floor(i / PER_SESSION)}`;
  const tool = TOOLS[i % TOOLS.length]!;
  const at = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
  const toolCallId = `tc-${i}`;
  return {
    v: 1,
    kind: "decision",
    callId: `call-${i}`,
    hook: "before_tool_call",
    context: {
      agentId: AGENT,
      sessionKey,
      runId: `${sessionKey}-run`,
      toolName: tool.toolName,
      toolCallId,
    },
    event: { toolName: tool.toolName, toolCallId, params: tool.params },
    outcomes: [],
    decision: { outcome: "allow", decidedBy: {} },
    registryRevision: 1,
    receivedAt: at,
    decidedAt: at,
    coordinator: "bench",
  };
}

async function buildLog(bus: Bus): Promise<number> {
  const candidates = buildCandidates(policies, registry).forHook("before_tool_call");
  const state = new MemorySessionStateStore();
  const pending = new Set<Promise<unknown>>();
  const t0 = performance.now();
  for (let i = 0; i < RECORDS; i++) {
    const record = input(i);
    // The decision the policies make, recorded the way the coordinator records it.
    const { result, outcomes } = await reevaluate(record, candidates, state);
    record.decision = result.decision;
    record.outcomes = outcomes.map((o) => ({ ...o, latencyMs: 0.05 }));
    const encoded = await bus.codec.encode(record);
    const subject = bus.subjects.audit(
      AGENT,
      String(record.context.sessionKey),
      "before_tool_call",
      result.decision.outcome,
    );
    const ack = bus.js.publish(subject, encoded.data, { headers: bodyHeaders(encoded) });
    pending.add(ack);
    void ack.finally(() => pending.delete(ack));
    if (pending.size >= IN_FLIGHT) await Promise.race(pending);
  }
  await Promise.all(pending);
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const server = await findNatsServer({ own: true });
  // The client settings of `hookbus replay` (src/cli/connect.ts).
  const nc = await connect({ ...connectionOptions({ server: server.url }), name: "bench-replay" });
  try {
    const bus = await Bus.open(nc, { namespace: NAMESPACE });
    await ensureLogStreams(bus.jsm, bus.subjects);
    const buildSeconds = await buildLog(bus);
    const info = await bus.jsm.streams.info(bus.subjects.logStream);
    console.log(
      `nats: ${server.source} ${server.url}; built a log of ${info.state.messages} decision records ` +
        `(${(info.state.bytes / 1e6).toFixed(1)} MB, ${RECORDS / PER_SESSION} sessions) in ${buildSeconds.toFixed(1)} s`,
    );

    // Reading alone, for the breakdown. CPU µs per record (this process, user + system) is
    // printed too: on a loaded machine it moves much less than records/s.
    const cpuMicros = (since: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since);
      return used.user + used.system;
    };
    let t0 = performance.now();
    let cpu0 = process.cpuUsage();
    let read = 0;
    for await (const _entry of readLog(bus, { filter: { agentId: AGENT } })) read++;
    const readSeconds = (performance.now() - t0) / 1000;
    console.log(
      `read only:        ${read} records in ${readSeconds.toFixed(2)} s = ${Math.round(read / readSeconds)} records/s, ${(cpuMicros(cpu0) / read).toFixed(1)} CPU µs/record`,
    );

    // The replay: reading from the log + evaluating 3 policies + merging + diffing, per record.
    const summarizer = new ReplaySummarizer();
    t0 = performance.now();
    cpu0 = process.cpuUsage();
    for await (const result of replay({
      records: readSelection(bus, { agentId: AGENT }),
      policies,
      registry,
    }))
      summarizer.add(result);
    const seconds = (performance.now() - t0) / 1000;
    const summary = summarizer.summary;
    if (summary.records !== RECORDS || summary.changed !== 0) {
      throw new Error(
        `replay saw ${summary.records} records, ${summary.changed} changed; expected ${RECORDS}, 0`,
      );
    }
    console.log(
      `read + replay:    ${summary.records} records (${summary.sessions} sessions, 3 policies, ${summary.changed} changed) in ${seconds.toFixed(2)} s, ${(cpuMicros(cpu0) / summary.records).toFixed(1)} CPU µs/record`,
    );
    console.log(
      `replay: records=${summary.records} seconds=${seconds.toFixed(2)} records_per_second=${Math.round(summary.records / seconds)}`,
    );
  } finally {
    await nc.drain();
    await server.stop();
  }
}

await main();
