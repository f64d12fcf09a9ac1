/**
 * What the fault and scale tests share: a namespace per test, connections that keep reconnecting
 * (so a test may restart its server), a pipeline built from the public API, reading the whole log
 * of a namespace back from its stream, and child processes (workers, the CLI coordinator).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import {
  Bus,
  type LogRecord,
  type DecisionRecord,
  type LateVerdictRecord,
} from "../../../src/index.js";
import { decisions, readLog } from "../../support/log.js";
import { uniqueNamespace as namespaceWith } from "../../support/nats.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { type RegistryDocumentInput } from "../../../src/registry/document.js";

export { startChild, type Child } from "../../support/child.js";
export { countByCallId, decisions, readLog } from "../../support/log.js";
export { connectTo, useNatsServer } from "../../support/nats.js";
export { rejection, sleep, until } from "../../support/wait.js";

export const uniqueNamespace = (prefix = "f") => namespaceWith(prefix);

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

export function lateVerdicts(records: readonly LogRecord[]): LateVerdictRecord[] {
  return records.filter((r): r is LateVerdictRecord => r.kind === "late");
}

/** The decision records of one call (there must be exactly one). */
export async function decisionsOf(bus: Bus, callId: string): Promise<DecisionRecord[]> {
  return decisions(await readLog(bus)).filter((r) => r.callId === callId);
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
