/**
 * What the tamper-evidence tests share: a log stream an attacker can edit (created before the
 * coordinator, without deny_delete / deny_purge, so messages can be deleted), reading a session's
 * stored messages raw, running the CLI as a user does, and building a session through the real
 * pipeline (coordinator, policy workers, agent SDK, observations).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { connect, type MsgHdrs } from "@nats-io/transport-node";
import { logStreamConfig } from "../../../src/bus/streams.js";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { onTestFinished } from "vitest";
import { definePolicy, type Bus } from "../../../src/index.js";
import { until } from "../../support/wait.js";
import {
  startPipeline,
  type Pipeline,
  type PipelineOptions,
  uniqueNamespace,
} from "../pipeline/harness.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { createSealKey, sealKeyFromSeed } from "../../../src/log/seal/keys.js";
import { readSealLag } from "../../../src/sealer/lag.js";
import { startSealer, type Sealer } from "../../../src/sealer/sealer.js";
import { generateAuth, parseAuthDescription } from "../../../src/auth/index.js";
import { parseTrustedKeys, signingKeyFromFile } from "../../../src/log/sign/keys.js";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `hookbus <args> --server URL --namespace NS`, through `main`, as a user runs it. */
export async function hookbus(url: string, namespace: string, ...args: string[]): Promise<Run> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const out: Output = { print: (l) => stdout.push(l), error: (l) => stderr.push(l) };
  const code = await main([...args, "--server", url, "--namespace", namespace], out);
  return { code, stdout: stdout.join("\n"), stderr: stderr.join("\n") };
}

/**
 * Create the namespace's log stream as hookbus would, but editable: a coordinator uses an
 * existing stream as it is, so the test can later delete messages like an attacker with
 * access to the server's API (or its files).
 */
export async function editableLog(url: string, namespace: string): Promise<void> {
  const nc = await connect({ servers: url });
  try {
    const { jetstreamManager } = await import("@nats-io/jetstream");
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({
      ...logStreamConfig(new Subjects(namespace)),
      deny_delete: false,
      deny_purge: false,
    });
  } finally {
    await nc.drain();
  }
}

export interface RawEntry {
  seq: number;
  subject: string;
  /** The stored record as decoded JSON (not validated). */
  raw: Record<string, unknown>;
  /** The stored bytes and headers (to re-publish a record as it was). */
  data: Uint8Array;
}

/** Every stored message of one session, in stream order. */
export async function sessionMessages(
  bus: Bus,
  agentId: string,
  sessionKey: string,
): Promise<RawEntry[]> {
  const prefix = bus.subjects
    .audit(agentId, sessionKey, "unknown", "error")
    .split(".")
    .slice(0, 4)
    .join(".");
  const info = await bus.jsm.streams.info(bus.subjects.logStream);
  const out: RawEntry[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq++) {
    const msg = await bus.jsm.streams.getMessage(bus.subjects.logStream, { seq }).catch(() => null);
    if (msg === null || !msg.subject.startsWith(`${prefix}.`)) continue;
    const raw = (await bus.codec.decodeMessage({
      data: msg.data,
      headers: msg.header,
    })) as RawEntry["raw"];
    out.push({ seq: msg.seq, subject: msg.subject, raw, data: msg.data });
  }
  return out;
}

/** Coordinator signing keys as an operator gets them: `hookbus auth` for one coordinator, c1. */
export function issuedKeys() {
  const dir = mkdtempSync(join(tmpdir(), "hookbus-sign-"));
  const generated = generateAuth(parseAuthDescription({ namespace: "x", coordinators: ["c1"] }), {
    configFile: join(dir, "nats-auth.conf"),
    keyDir: join(dir, "keys"),
  });
  const issued = generated.signingKeys[0]!;
  return {
    seedFile: issued.file,
    trustedFile: generated.trustedKeysFile,
    key: signingKeyFromFile(issued.file),
    trusted: parseTrustedKeys([], generated.trustedKeysFile),
  };
}

/** One sealer key pair per test file: the seed stays in the test (the "operator"). */
export const sealKey = (() => {
  const { seed, publicKey } = createSealKey();
  return { seed, publicKey, pair: sealKeyFromSeed(seed) };
})();

/** A sealer on the namespace, signing with `sealKey`, sealing in small, quick batches. */
export function sealerFor(
  bus: Bus,
  options: { id?: string; leaseTtlMs?: number; logger?: Logger } = {},
): Promise<Sealer> {
  return startSealer({
    nc: bus.nc,
    namespace: bus.subjects.namespace,
    key: sealKey.pair,
    maxBatch: 4,
    maxDelayMs: 20,
    ...options,
  });
}

/** Until every record the log holds now is sealed. */
export async function sealedUpToNow(bus: Bus, timeoutMs = 10_000): Promise<void> {
  const last = (await bus.jsm.streams.info(bus.subjects.logStream)).state.last_seq;
  await until(async () => (await readSealLag(bus)).sealedSeq >= last, timeoutMs, "log sealed");
}

/** Publish a (forged) record to a log subject, bypassing hookbus; returns its sequence. */
export async function publishRaw(bus: Bus, subject: string, record: unknown): Promise<number> {
  const encoded = await bus.codec.encode(record);
  const headers = (await import("../../../src/bus/codec.js")).bodyHeaders(encoded);
  const ack = await bus.js.publish(subject, encoded.data, { headers });
  return ack.seq;
}

export const guard = definePolicy({
  name: "guard",
  version: "1.0.0",
  hooks: {
    before_tool_call: (e) =>
      e.toolName === "exec" ? { block: true, blockReason: "no shell" } : undefined,
    before_response_emit: (e) =>
      e.content.includes("secret") ? { block: true, blockReason: "leaks a secret" } : undefined,
  },
});

export const AGENT = "agent-t";
export const SESSION = "sess t.1";

export const run = (sessionKey = SESSION) => ({ agentId: AGENT, sessionKey, runId: "run-1" });
export const toolCtx = (id: string, toolName: string, sessionKey = SESSION) => ({
  ...run(sessionKey),
  toolName,
  toolCallId: id,
});
export const toolEvent = (id: string, toolName: string) => ({
  toolName,
  toolCallId: id,
  params: { path: `/data/${id}` },
});

export interface SessionOptions {
  /** before_tool_call decisions in the session (default 3). */
  calls?: number;
  /** An editable log stream (default true). */
  editable?: boolean;
  namespace?: string;
  coordinator?: PipelineOptions["coordinator"];
}

/**
 * A pipeline on an editable log (unless `editable` is false) with `guard` registered, and a
 * session of `calls` before_tool_call decisions (every third an exec, blocked), an
 * after_tool_call observation after each, and a before_response_emit at the end.
 */
export async function sessionPipeline(
  url: string,
  options: SessionOptions = {},
): Promise<{ p: Pipeline; entries: RawEntry[] }> {
  const namespace = options.namespace ?? uniqueNamespace("t");
  if (options.editable !== false) await editableLog(url, namespace);
  const p = await startPipeline(url, {
    namespace,
    registry: {
      policies: [
        { name: "guard", hooks: ["before_tool_call", "before_response_emit"], priority: 10 },
      ],
    },
    policies: [guard],
    ...(options.coordinator === undefined ? {} : { coordinator: options.coordinator }),
  });
  const calls = options.calls ?? 3;
  for (let i = 0; i < calls; i++) {
    const tool = i % 3 === 2 ? "exec" : "read_file";
    const id = `tc-${i}`;
    const result = await p.client.call("before_tool_call", toolCtx(id, tool), toolEvent(id, tool), {
      callId: `call-${i}`,
    });
    await p.client.observe(
      "after_tool_call",
      toolCtx(id, tool),
      {
        ...toolEvent(id, tool),
        result: "ok",
        durationMs: 1,
        blocked: result.decision.outcome === "block",
      },
      { eventId: `obs-${i}` },
    );
  }
  await p.client.call(
    "before_response_emit",
    run(),
    { content: "done", allContent: ["done"] },
    { callId: "emit-1" },
  );
  return { p, entries: await sessionMessages(p.bus, AGENT, SESSION) };
}

export interface StoredMessage {
  subject: string;
  data: Uint8Array;
  headers?: MsgHdrs;
}

/**
 * What an attacker with the server's files can do: rewrite a stream's history. Every message is
 * read, the stream deleted and created again (editable), and `transform`'s messages published in
 * order; sequences stay where they were as long as `transform` keeps the count before a change.
 */
export async function rewriteStream(
  bus: Bus,
  stream: string,
  transform: (messages: StoredMessage[]) => StoredMessage[],
): Promise<void> {
  const info = await bus.jsm.streams.info(stream);
  const messages: StoredMessage[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq++) {
    const msg = await bus.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (msg !== null) messages.push({ subject: msg.subject, data: msg.data, headers: msg.header });
  }
  await bus.jsm.streams.delete(stream);
  await bus.jsm.streams.add({ ...info.config, deny_delete: false, deny_purge: false });
  for (const m of transform(messages)) {
    await bus.js.publish(m.subject, m.data, m.headers === undefined ? {} : { headers: m.headers });
  }
}

/** A session (`sessionPipeline`) with the audit tests' tools; everything stops when the test ends. */
export interface AuditedSession {
  p: Pipeline;
  entries: RawEntry[];
  /** The sealer that sealed the session (undefined with `sealed: false`). */
  sealer: Sealer | undefined;
  /** Another sealer on the session's namespace (`sealerFor`), stopped when the test ends. */
  addSealer: (options?: Parameters<typeof sealerFor>[1]) => Promise<Sealer>;
  /** `hookbus <args>` on the session's server and namespace. */
  cli: (...args: string[]) => Promise<Run>;
  /** `hookbus audit verify --key <sealKey's public key> <extra>`. */
  verify: (...extra: string[]) => Promise<Run>;
}

/**
 * `sessionPipeline`, then (unless `sealed` is false) a sealer that has sealed the whole session.
 * Call it inside a test: its sealers and pipeline are stopped when the test ends, pass or fail.
 */
export async function auditedSession(
  url: string,
  options: SessionOptions & { sealed?: boolean } = {},
): Promise<AuditedSession> {
  const { p, entries } = await sessionPipeline(url, options);
  const sealers: Sealer[] = [];
  onTestFinished(async () => {
    for (const sealer of sealers) await sealer.stop().catch(() => {});
    await p.stop();
  });
  const addSealer = async (sealerOptions?: Parameters<typeof sealerFor>[1]) => {
    const sealer = await sealerFor(p.bus, sealerOptions);
    sealers.push(sealer);
    return sealer;
  };
  let sealer: Sealer | undefined;
  if (options.sealed !== false) {
    sealer = await addSealer();
    await sealedUpToNow(p.bus);
  }
  const cli = (...args: string[]) => hookbus(url, p.namespace, ...args);
  return {
    p,
    entries,
    sealer,
    addSealer,
    cli,
    verify: (...extra) => cli("audit", "verify", "--key", sealKey.publicKey, ...extra),
  };
}
