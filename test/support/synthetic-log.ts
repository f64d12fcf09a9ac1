/**
 * A log of synthetic but valid records, published straight to a namespace's log stream (as a
 * coordinator would store them), for indexer tests and the audit benchmark: decisions of
 * `before_tool_call` across agents and sessions, asked of two enforced policies and one shadow
 * policy, some blocked, some that the shadow policy would have changed, plus observations.
 */
import type { Bus } from "../../src/bus/bus.js";
import { bodyHeaders } from "../../src/bus/codec.js";
import { ensureLogStreams } from "../../src/bus/streams.js";
import type { RecordKind } from "../../src/bus/subjects.js";
import type { DecisionRecord, LogRecord, ObservationRecord } from "../../src/log/record.js";

export interface SyntheticLogOptions {
  records: number;
  sessions: number;
  /** Agents the sessions are spread over (default 20). */
  agents?: number;
  /** Publishes in flight (default 2000). */
  inFlight?: number;
  /** Called every `progressEvery` records (default: never). */
  onProgress?: (published: number) => void;
  progressEvery?: number;
}

const TOOLS = ["read_file", "web_fetch", "exec", "write_file", "search"];

export function syntheticAgent(i: number): string {
  return `agent-${i}`;
}

export function syntheticSession(i: number): string {
  return `session-${i}`;
}

/** Record `i`: session i mod sessions; every 10th an observation; tool `exec` is blocked. */
export function syntheticRecord(
  i: number,
  options: Pick<SyntheticLogOptions, "sessions" | "agents">,
): { record: LogRecord; agentId: string; sessionKey: string; kind: RecordKind } {
  const s = i % options.sessions;
  const agentId = syntheticAgent(s % (options.agents ?? 20));
  const sessionKey = syntheticSession(s);
  const at = new Date().toISOString();
  const context = { agentId, sessionKey, runId: `run-${s}` };
  if (i % 10 === 9) {
    const record: ObservationRecord = {
      v: 1,
      kind: "observation",
      eventId: `ev-${i}`,
      hook: "after_tool_call",
      context,
      event: { toolName: "read_file", params: { path: `/srv/${i}` }, result: "ok", durationMs: 3 },
      publishedAt: at,
    };
    return { record, agentId, sessionKey, kind: "observed" };
  }
  const toolName = TOOLS[i % TOOLS.length]!;
  const blocked = toolName === "exec";
  const shadowBlocks = toolName === "write_file";
  const record: DecisionRecord = {
    v: 1,
    kind: "decision",
    callId: `call-${i}`,
    hook: "before_tool_call",
    context: { ...context, toolCallId: `tc-${i}` },
    event: { toolName, toolCallId: `tc-${i}`, params: { path: `/srv/data/${i}.csv`, limit: 100 } },
    outcomes: [
      {
        policy: "no-shell",
        version: "1.0.0",
        priority: 100,
        mode: "enforce",
        failMode: "fail-closed",
        status: "ok",
        effect: blocked ? "applied" : "no-opinion",
        ...(blocked ? { verdict: { block: true, blockReason: "no shell" } } : {}),
        latencyMs: 0.4 + (i % 7) * 0.1,
      },
      {
        policy: "path-guard",
        version: "2.1.0",
        priority: 50,
        mode: "enforce",
        failMode: "fail-open",
        status: i % 97 === 0 ? "timeout" : "ok",
        effect: i % 97 === 0 ? "failed-open" : "no-opinion",
        latencyMs: 1 + (i % 13) * 0.2,
      },
      {
        policy: "candidate",
        version: "0.1.0",
        priority: 10,
        mode: "shadow",
        failMode: "fail-open",
        status: "ok",
        effect: shadowBlocks ? "applied" : "no-opinion",
        ...(shadowBlocks ? { verdict: { block: true, blockReason: "destructive" } } : {}),
        latencyMs: 0.8,
      },
    ],
    decision: blocked
      ? {
          outcome: "block",
          block: true,
          blockReason: "no shell",
          blockedBy: "no-shell",
          decidedBy: { block: ["no-shell"] },
        }
      : { outcome: "allow", decidedBy: {} },
    ...(shadowBlocks
      ? {
          shadow: {
            decision: {
              outcome: "block",
              block: true,
              blockReason: "destructive",
              blockedBy: "candidate",
            },
            changed: true,
          },
        }
      : {}),
    registryRevision: 3,
    receivedAt: at,
    decidedAt: at,
    coordinator: "synthetic",
  };
  return { record, agentId, sessionKey, kind: blocked ? "block" : "allow" };
}

/** Publishes records `from` … `from + records - 1` to the namespace's log (created if missing). */
export async function publishSyntheticLog(
  bus: Bus,
  options: SyntheticLogOptions,
  from = 0,
): Promise<void> {
  await ensureLogStreams(bus.jsm, bus.subjects);
  const inFlight = options.inFlight ?? 2000;
  const pending = new Set<Promise<unknown>>();
  for (let i = from; i < from + options.records; i++) {
    const { record, agentId, sessionKey, kind } = syntheticRecord(i, options);
    const encoded = await bus.codec.encode(record);
    const subject = bus.subjects.audit(
      agentId,
      sessionKey,
      record.hook as "before_tool_call",
      kind,
    );
    const ack = bus.js.publish(subject, encoded.data, { headers: bodyHeaders(encoded) });
    pending.add(ack);
    void ack.finally(() => pending.delete(ack)).catch(() => {});
    if (pending.size >= inFlight) await Promise.race(pending);
    if (
      options.onProgress !== undefined &&
      (i + 1 - from) % (options.progressEvery ?? 100_000) === 0
    )
      options.onProgress(i + 1 - from);
  }
  await Promise.all(pending);
}
