/**
 * What the fault and scale tests share: a namespace per test, connections that keep reconnecting
 * (so a test may restart its server), a pipeline built from the public API, reading the whole log
 * of a namespace back from its stream, and child processes (workers, the CLI coordinator).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  Bus,
  LogRecord,
  type DecisionRecord,
  RegistryStore,
  type LateVerdictRecord,
  type RegistryDocumentInput,
} from "../../../src/index.js";

export function uniqueNamespace(prefix = "f"): string {
  return `${prefix}-${randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

/** Every connection of these tests survives a server restart: it keeps trying, quickly. */
export function connectTo(url: string): Promise<NatsConnection> {
  return connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
}

/** Opens the namespace's bus and applies a registry document (creating the bucket). */
export async function applyRegistry(
  nc: NatsConnection,
  namespace: string,
  registry: RegistryDocumentInput,
): Promise<Bus> {
  const bus = await Bus.open(nc, { namespace });
  const store = await RegistryStore.open(nc, bus.subjects);
  await store.apply(registry);
  return bus;
}

/** Every record of the namespace's log stream, in stream order (an empty log if it has none). */
export async function readLog(bus: Bus): Promise<LogRecord[]> {
  const stream = bus.subjects.logStream;
  const info = await bus.jsm.streams.info(stream);
  const records: LogRecord[] = [];
  for (
    let seq = info.state.first_seq;
    seq <= info.state.last_seq && info.state.messages > 0;
    seq++
  ) {
    const m = await bus.jsm.streams.getMessage(stream, { seq });
    if (m === null) throw new Error(`log record ${seq} is missing`);
    records.push(
      LogRecord.parse(await bus.codec.decodeMessage({ data: m.data, headers: m.header })),
    );
  }
  return records;
}

export function decisions(records: readonly LogRecord[]): DecisionRecord[] {
  return records.filter((r): r is DecisionRecord => r.kind === "decision");
}

export function lateVerdicts(records: readonly LogRecord[]): LateVerdictRecord[] {
  return records.filter((r): r is LateVerdictRecord => r.kind === "late");
}

/** The decision records of one call (there must be exactly one). */
export async function decisionsOf(bus: Bus, callId: string): Promise<DecisionRecord[]> {
  return decisions(await readLog(bus)).filter((r) => r.callId === callId);
}

/** How many records each callId has. */
export function countByCallId(records: readonly { callId: string }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.callId, (counts.get(r.callId) ?? 0) + 1);
  return counts;
}

export async function until<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 5000,
  what = "condition",
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

export const toolCtx = (id: string, sessionKey = "session-1") => ({
  agentId: "agent-faults",
  sessionKey,
  runId: "run-1",
  toolCallId: id,
});

export const toolEvent = (id: string) => ({
  toolName: "shell",
  toolCallId: id,
  params: { cmd: "ls" },
});

export const llmCtx = (sessionKey = "session-1") => ({
  agentId: "agent-faults",
  sessionKey,
  runId: "run-1",
});

export const llmEvent = () => ({
  messages: [{ role: "user", content: "hello" }],
  iteration: 0,
});

export interface Child {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
  errors: () => string;
}

/** A child process with its stdout/stderr collected and its exit code as a promise. */
export function startChild(args: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  return { child, exited, output: () => out, errors: () => err };
}
