/**
 * Runs hostile messages against a real coordinator process (`hookbus coordinator`, so a crash is
 * an exit and its memory is its own) with a hostile policy worker answering its policy requests,
 * and reports: crashes, calls unanswered by their deadline, answers without a hookbus error code,
 * log records failing the schema, and the coordinator's RSS before, at peak and after.
 */
import { connect, headers as natsHeaders, type Msg } from "@nats-io/transport-node";
import { Bus } from "../../src/index.js";
import { LogRecord } from "../../src/log/record.js";
import { ErrorCodes } from "../../src/foundation/errors.js";
import { CallReply } from "../../src/bus/envelope.js";
import { findNatsServer } from "../../src/testing/nats.js";
import { uniqueNamespace } from "../support/nats.js";
import { until } from "../support/wait.js";
import { fuzzMessage, seededRandom, type FuzzMessage } from "./generator.js";
import { startProbedCoordinator, type MemoryFigures } from "./probed-coordinator.js";
import { RegistryStore } from "../../src/registry/store.js";
import { Subjects } from "../../src/bus/subjects.js";
import { startFuzzEvidence, type FuzzEvidence, type FuzzVerify } from "./evidence.js";

export interface FuzzOptions {
  count: number;
  seed: number;
  concurrency?: number;
  /** Each message's deadline; an answer later than this counts as unanswered. */
  deadlineMs?: number;
  /**
   * Send `count` messages this many times to the same coordinator, with a settled memory reading
   * after each round: a leak grows round after round, a high-water mark does not. Default 1.
   */
  rounds?: number;
  /** Extra environment of the coordinator process (e.g. MALLOC_ARENA_MAX, NODE_OPTIONS). */
  coordinatorEnv?: Record<string, string>;
  /**
   * Seal the log alongside (a sealer, the coordinator signing its records) and run
   * `hookbus audit verify` on it afterwards (evidence.ts): the report's `verify`.
   */
  verify?: boolean;
  /** Called every 100 messages. */
  progress?: (sent: number, report: FuzzReport) => void;
}

/** The coordinator's memory: RSS, and heap/external from inside the process (memory-probe.mjs). */
export interface FuzzMemory {
  /** Settled (after a forced GC) once the coordinator answers, before any hostile message. */
  before: MemoryFigures;
  /** The highest of each figure sampled during the run (no forced GC). */
  peak: MemoryFigures;
  /** Settled after the last round and a 2 s idle. */
  after: MemoryFigures;
  /** Settled after each round. */
  rounds: MemoryFigures[];
}

export interface FuzzReport {
  seed: number;
  sent: number;
  crashes: number;
  /** `n` is the message's index: `fuzzMessage(seededRandom(seed), …)` reproduces it. */
  unanswered: { kind: string; path: string; n: number; at: number }[];
  uncoded: { kind: string; path: string; body: string }[];
  /** Requests on a subject nobody serves (the observe path on a build without it). */
  noResponders: number;
  answered: number;
  records: number;
  badRecords: { seq: number; problem: string }[];
  rssMiB: { before: number; peak: number; after: number };
  memory?: FuzzMemory;
  /** The coordinator's allocator ("jemalloc" or "glibc malloc"). */
  allocator?: string;
  byKind: Record<string, number>;
  /** `audit verify` on the fuzzed log (with `verify`): any finding is a false alarm. */
  verify?: FuzzVerify;
}

const CODES = new Set(Object.keys(ErrorCodes));
const maxFigures = (a: MemoryFigures, b: MemoryFigures): MemoryFigures => ({
  rssMiB: Math.max(a.rssMiB, b.rssMiB),
  heapUsedMiB: Math.max(a.heapUsedMiB, b.heapUsedMiB),
  heapTotalMiB: Math.max(a.heapTotalMiB, b.heapTotalMiB),
  externalMiB: Math.max(a.externalMiB, b.externalMiB),
  arrayBuffersMiB: Math.max(a.arrayBuffersMiB, b.arrayBuffersMiB),
});

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const deadlineMs = options.deadlineMs ?? 5000;
  const concurrency = options.concurrency ?? 16;
  const server = await findNatsServer({ own: true });
  const ns = uniqueNamespace("fuzz");
  const subjects = new Subjects(ns);
  const nc = await connect({ servers: server.url, name: "fuzz-driver" });
  let evidence: FuzzEvidence | undefined;
  if (options.verify === true) evidence = await startFuzzEvidence(nc, ns);
  const coordinator = startProbedCoordinator(
    [
      "--server",
      server.url,
      "--namespace",
      ns,
      "--log-level",
      "fatal",
      ...(evidence?.coordinatorArgs ?? []),
    ],
    options.coordinatorEnv,
  );
  const report: FuzzReport = {
    seed: options.seed,
    sent: 0,
    crashes: 0,
    unanswered: [],
    uncoded: [],
    noResponders: 0,
    answered: 0,
    records: 0,
    badRecords: [],
    rssMiB: { before: 0, peak: 0, after: 0 },
    byKind: {},
  };
  try {
    await (
      await RegistryStore.open(nc, subjects)
    ).apply({
      policies: [
        {
          name: "fuzz",
          hooks: ["before_tool_call"],
          priority: 1,
          timeoutMs: 1000,
          failMode: "fail-closed",
        },
      ],
    });
    // The hostile worker: answers each policy request with the next queued hostile reply.
    const replies: FuzzMessage[] = [];
    nc.subscribe(subjects.policyWildcard("fuzz"), {
      queue: subjects.policyQueue("fuzz"),
      callback: (_error, msg) => {
        const hostile = replies.shift();
        if (hostile === undefined) {
          msg.respond(JSON.stringify({ policy: "fuzz" }));
          return;
        }
        const h = natsHeaders();
        for (const [k, v] of Object.entries(hostile.headers)) h.set(k, v);
        msg.respond(hostile.data, { headers: h });
      },
    });
    const valid = (callId: string) =>
      JSON.stringify({
        callId,
        hook: "before_tool_call",
        context: {
          agentId: "fuzz-agent",
          sessionKey: "ready",
          runId: "r",
          toolName: "t",
          toolCallId: callId,
        },
        event: { toolName: "t", toolCallId: callId, params: {} },
      });
    await until(
      async () =>
        nc
          .request(subjects.call("fuzz-agent", "before_tool_call"), valid(`ready-${Date.now()}`), {
            timeout: 1000,
          })
          .then(() => true)
          .catch(() => false),
      30_000,
      "coordinator answering",
    );
    const before = await coordinator.settled();
    report.allocator = coordinator.allocator();
    const memory: FuzzMemory = { before, peak: before, after: before, rounds: [] };
    report.memory = memory;
    report.rssMiB.before = before.rssMiB;
    report.rssMiB.peak = report.rssMiB.before;
    const sampler = setInterval(() => {
      if (coordinator.child.exitCode !== null) return;
      report.rssMiB.peak = Math.max(report.rssMiB.peak, coordinator.rssMiB());
    }, 100);
    // Heap and external peaks from inside the process, less often (a round trip each).
    let sampling = false;
    const heapSampler = setInterval(() => {
      if (coordinator.child.exitCode !== null || sampling) return;
      sampling = true;
      coordinator
        .sample()
        .then((m) => (memory.peak = maxFigures(memory.peak, m)))
        .catch(() => undefined)
        .finally(() => (sampling = false));
    }, 250);

    let next = 0;
    const one = async (message: FuzzMessage, n: number) => {
      report.byKind[message.kind] = (report.byKind[message.kind] ?? 0) + 1;
      let subject = `${ns}.${message.path === "observe" ? "observe" : "call"}.${message.agentToken}.${message.hook}`;
      let data: Uint8Array | string = message.data;
      const h = natsHeaders();
      if (message.path === "policy-reply") {
        replies.push(message);
        subject = subjects.call("fuzz-agent", "before_tool_call");
        data = valid(`reply-${n}`);
      } else {
        for (const [k, v] of Object.entries(message.headers)) h.set(k, v);
      }
      let reply: Msg;
      try {
        reply = await nc.request(subject, data, { timeout: deadlineMs, headers: h });
      } catch (error) {
        const cause = (error as Error).cause;
        const text = `${(error as Error).message} ${cause instanceof Error ? cause.message : ""}`;
        if (/no responders|503/i.test(text)) report.noResponders++;
        else if (/timeout/i.test(text))
          report.unanswered.push({ kind: message.kind, path: message.path, n, at: Date.now() });
        else
          report.uncoded.push({ kind: message.kind, path: message.path, body: text.slice(0, 200) });
        return;
      }
      report.answered++;
      const code = reply.headers?.get("Hookbus-Error-Code") ?? "";
      if (code !== "" && CODES.has(code)) return;
      const parsed = await decodeReply(reply);
      if (message.path !== "observe" && CallReply.safeParse(parsed).success) return;
      if (
        message.path === "observe" &&
        typeof (parsed as { recordSeq?: unknown })?.recordSeq === "number"
      )
        return;
      report.uncoded.push({
        kind: message.kind,
        path: message.path,
        body: JSON.stringify(parsed)?.slice(0, 200) ?? String(parsed),
      });
    };
    const bus = await Bus.open(nc, { namespace: ns });
    const decodeReply = (msg: Msg) =>
      bus.codec.decodeMessage(msg).catch((e: unknown) => `undecodable: ${String(e)}`);
    const rounds = options.rounds ?? 1;
    for (let round = 0; round < rounds && coordinator.child.exitCode === null; round++) {
      // Each round sends the same seeded sequence (fresh ids: n runs on across rounds).
      const random = seededRandom(options.seed);
      const end = next + options.count;
      const workers = Array.from({ length: concurrency }, async () => {
        while (next < end && coordinator.child.exitCode === null) {
          const n = next++;
          report.sent++;
          if (n % 100 === 0) options.progress?.(n, report);
          await one(fuzzMessage(random, n, "fuzz-agent"), n);
        }
      });
      await Promise.all(workers);
      if (coordinator.child.exitCode !== null) break;
      // Idle a moment so late verdicts and buffers settle before the round's figure.
      await new Promise((r) => setTimeout(r, 2000));
      const settled = await coordinator.settled();
      memory.rounds.push(settled);
      memory.after = settled;
    }
    clearInterval(sampler);
    clearInterval(heapSampler);
    if (coordinator.child.exitCode !== null) report.crashes++;
    else report.rssMiB.after = memory.after.rssMiB;
    memory.peak = maxFigures(memory.peak, memory.after);
    const info = await bus.jsm.streams.info(subjects.logStream);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq++) {
      const msg = await bus.jsm.streams.getMessage(subjects.logStream, { seq });
      if (msg === null) continue;
      report.records++;
      let problem: string | undefined;
      try {
        const parsed = LogRecord.safeParse(
          await bus.codec.decodeMessage({ data: msg.data, headers: msg.header }),
        );
        if (!parsed.success) problem = parsed.error.issues[0]?.message ?? "invalid";
      } catch (error) {
        problem = `undecodable: ${String(error)}`;
      }
      if (problem !== undefined) report.badRecords.push({ seq, problem: problem.slice(0, 200) });
    }
    if (evidence !== undefined) report.verify = await evidence.verify(bus, server.url);
    return report;
  } finally {
    coordinator.child.kill("SIGTERM");
    await coordinator.exited;
    await evidence?.stop();
    await nc.close();
    await server.stop();
  }
}
