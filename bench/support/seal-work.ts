/**
 * The coordinator's sealing work per record with encryption on (src/privacy/record-cipher.ts),
 * measured alone on the record the benchmark's call stores: steady, where the A/B of whole calls
 * on a shared machine is not. The key is in memory, as it is for nearly every record.
 */
import { randomBytes } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { Bus } from "../../src/bus/bus.js";
import type { LogRecord } from "../../src/log/record.js";
import { sealRecord, subjectDigest } from "../../src/privacy/index.js";
import { BENCH_EVENT } from "./decision-path.js";

/** The last record of `namespace`'s log (an encrypted path's), as it was before it was sealed. */
export async function clearBenchRecord(nc: NatsConnection, namespace: string): Promise<LogRecord> {
  const bus = await Bus.open(nc, { namespace });
  const stored = await bus.jsm.streams.getMessage(bus.subjects.logStream, {
    last_by_subj: `${namespace}.audit.>`,
  });
  if (stored === null) throw new Error(`no record in the log of ${namespace}`);
  const sealed = JSON.parse(stored.string()) as LogRecord;
  const { encrypted: _omitted, ...clearShape } = sealed;
  // Its sealed places back: the benchmark's calls all carry BENCH_EVENT.
  return { ...clearShape, event: BENCH_EVENT } as unknown as LogRecord;
}

/** CPU µs of one `sealRecord` of `record`, over `n` seals after a warm-up. */
export function sealWorkPerRecordUs(record: LogRecord, n = 20_000): number {
  const key = { kid: "0123456789abcdef", key: randomBytes(32) };
  const subject = subjectDigest("session:bench");
  for (let i = 0; i < n / 10; i++) sealRecord(record, subject, key);
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) sealRecord(record, subject, key);
  const cpu = process.cpuUsage(before);
  return (cpu.user + cpu.system) / n;
}
