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

/**
 * CPU µs of one `sealRecord` of `record`, over `n` seals after a warm-up. Each seal gets a copy
 * of its own, made before the clock starts: on the decision path every record is a new object.
 */
export function sealWorkPerRecordUs(record: LogRecord, n = 20_000): number {
  const key = { kid: "0123456789abcdef", key: randomBytes(32) };
  const subject = subjectDigest("session:bench");
  const text = JSON.stringify(record);
  const batch = 2000;
  const copies = () => Array.from({ length: batch }, () => JSON.parse(text) as LogRecord);
  for (const copy of copies()) sealRecord(copy, subject, key);
  let cpuUs = 0;
  for (let done = 0; done < n; done += batch) {
    const records = copies();
    const before = process.cpuUsage();
    for (const copy of records) sealRecord(copy, subject, key);
    const cpu = process.cpuUsage(before);
    cpuUs += cpu.user + cpu.system;
  }
  return cpuUs / (Math.ceil(n / batch) * batch);
}
