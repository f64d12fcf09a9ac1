/**
 * The coordinator's sealing work per record with encryption on (src/privacy/record-cipher.ts),
 * measured alone on the record the benchmark's call stores: steadier than the A/B of whole calls
 * on a shared machine. The key is in memory, as it is for nearly every record.
 */
import { randomBytes } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { Bus } from "../../src/bus/bus.js";
import type { LogRecord } from "../../src/log/record.js";
import { sealRecord, subjectDigest } from "../../src/privacy/index.js";
import type { DataKey } from "../../src/privacy/record-cipher.js";
import { findNatsServer } from "../../src/testing/nats.js";
import {
  BenchConnections,
  concurrent,
  laneCall,
  openRoles,
  startDecisionPath,
} from "./decision-path.js";

/** The record a plain decision path stores for the benchmark call, on a private server. */
export async function plainBenchRecord(): Promise<LogRecord> {
  const server = await findNatsServer({ own: true });
  const conns = new BenchConnections(server.url);
  try {
    const namespace = `bplain${Date.now().toString(36)}`;
    const roles = await openRoles(conns);
    const path = await startDecisionPath(roles, namespace);
    await concurrent(laneCall(path.client, 4), 8, 4);
    const record = await clearBenchRecord(roles.coordinator, namespace);
    await path.stop();
    return record;
  } finally {
    await conns.drain();
    await server.stop();
  }
}

/**
 * The last record of a PLAIN path's log (`namespace` without encryption): what the encrypted path
 * seals for the same call, with every field it seals in clear, the call's facts included (they
 * are most of the sealed bytes).
 */
export async function clearBenchRecord(nc: NatsConnection, namespace: string): Promise<LogRecord> {
  const bus = await Bus.open(nc, { namespace });
  const stored = await bus.jsm.streams.getMessage(bus.subjects.logStream, {
    last_by_subj: `${namespace}.audit.>`,
  });
  if (stored === null) throw new Error(`no record in the log of ${namespace}`);
  const record = JSON.parse(stored.string()) as LogRecord;
  if (record.encrypted !== undefined) throw new Error(`the log of ${namespace} is encrypted`);
  return record;
}

/** How a build seals a record: this tree's `sealRecord`, or another revision's (bench/seal-ab.ts). */
export type Seal = typeof sealRecord;

/** What a record is sealed with: the subject's data key and the subject's digest. */
export interface BenchSealing {
  key: DataKey;
  subject: string;
}

/** A key and a subject as the coordinator seals with them: the key in memory. */
export function benchSealing(): BenchSealing {
  return {
    key: { kid: "0123456789abcdef", key: randomBytes(32) },
    subject: subjectDigest("session:bench"),
  };
}

/** `n` copies of the record whose JSON is `text`: on the decision path every record is a new object. */
export function recordCopies(text: string, n: number): LogRecord[] {
  return Array.from({ length: n }, () => JSON.parse(text) as LogRecord);
}

/** CPU µs `seal` spends on all of `records` (copies made before the clock starts). */
export function sealCpuUs(seal: Seal, records: LogRecord[], sealing: BenchSealing): number {
  const before = process.cpuUsage();
  for (const record of records) seal(record, sealing.subject, sealing.key);
  const cpu = process.cpuUsage(before);
  return cpu.user + cpu.system;
}

/**
 * CPU µs of one `sealRecord` of `record`, over `n` seals after a warm-up. Each seal gets a copy
 * of its own, made before the clock starts.
 */
export function sealWorkPerRecordUs(record: LogRecord, n = 20_000): number {
  const sealing = benchSealing();
  const text = JSON.stringify(record);
  const batch = 2000;
  sealCpuUs(sealRecord, recordCopies(text, batch), sealing);
  let cpuUs = 0;
  for (let done = 0; done < n; done += batch)
    cpuUs += sealCpuUs(sealRecord, recordCopies(text, batch), sealing);
  return cpuUs / (Math.ceil(n / batch) * batch);
}
