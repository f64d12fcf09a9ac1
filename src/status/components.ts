/**
 * `hookbus status` beyond discovery: the evidence lag of the sealer and the lag of the audit
 * indexer, read from the streams (each only when that component exists in the namespace).
 */
import type { Bus } from "../bus/bus.js";
import { isConsumerNotFound, isPermissionViolation, isStreamNotFound } from "../bus/streams.js";
import { indexLag } from "../indexer/consumer.js";
import { sealStreamName } from "../log/seal/batch.js";
import { readSealLag } from "../sealer/lag.js";
import { readLease, type LeaseValue } from "../log/seal/lease-value.js";

export interface SealerStatus {
  /** The seal stream is there: a sealer ran in this namespace. */
  present: true;
  records: number;
  seconds: number;
  sealedSeq: number;
  logLastSeq: number;
  lastSealAt?: string;
  /** The sealer holding the lease now (undefined: none holds it). */
  leaseHolder?: string;
  /** The public key the lease holder names (audit verify --key checks it is trusted). */
  leaseKey?: string;
}

export interface IndexerStatus {
  present: true;
  consumer: string;
  records: number;
  seconds: number;
}

export type Absent = { present: false };

async function streamExists(bus: Bus, name: string): Promise<boolean> {
  try {
    await bus.jsm.streams.info(name);
    return true;
  } catch (error) {
    // Absent, or not readable with these credentials (not this role's to see).
    if (isStreamNotFound(error) || isPermissionViolation(error)) return false;
    throw error;
  }
}

/** The live lease (expired: none holds it); unreadable reads as none, as status shows it. */
async function readLiveLease(bus: Bus): Promise<LeaseValue | undefined> {
  const lease = await readLease(bus).catch(() => undefined);
  return lease !== undefined && lease.until > Date.now() ? lease : undefined;
}

export async function readSealerStatus(bus: Bus): Promise<SealerStatus | Absent> {
  if (!(await streamExists(bus, sealStreamName(bus.subjects)))) return { present: false };
  const [lag, lease] = await Promise.all([readSealLag(bus), readLiveLease(bus)]);
  return {
    present: true,
    records: lag.records,
    seconds: Math.round(lag.seconds * 10) / 10,
    sealedSeq: lag.sealedSeq,
    logLastSeq: lag.logLastSeq,
    ...(lag.lastSealAt === undefined ? {} : { lastSealAt: lag.lastSealAt.toISOString() }),
    ...(lease === undefined ? {} : { leaseHolder: lease.holder }),
    ...(lease?.key === undefined ? {} : { leaseKey: lease.key }),
  };
}

export async function readIndexerStatus(
  bus: Bus,
  consumer?: string,
): Promise<IndexerStatus | Absent> {
  const name = consumer ?? `${bus.subjects.namespace}-indexer`;
  try {
    await bus.jsm.consumers.info(bus.subjects.logStream, name);
  } catch (error) {
    // Absent, or not readable with these credentials (not this role's to see).
    if (isConsumerNotFound(error) || isStreamNotFound(error) || isPermissionViolation(error)) {
      return { present: false };
    }
    throw error;
  }
  const lag = await indexLag(bus, name);
  return {
    present: true,
    consumer: name,
    records: lag.records,
    seconds: Math.round(lag.seconds * 10) / 10,
  };
}

/** Problems for `--check`: the seal lag past the threshold, a seal stream with no lease holder. */
export function componentProblems(sealer: SealerStatus | Absent, maxSealLagS: number): string[] {
  if (!sealer.present) return [];
  const problems: string[] = [];
  if (sealer.leaseHolder === undefined)
    problems.push(
      "no sealer holds the lease: log records are not being sealed; start one: hookbus sealer --key-file FILE (docs/tamper-evidence.md)",
    );
  if (sealer.records > 0 && sealer.seconds > maxSealLagS)
    problems.push(
      `evidence lag ${sealer.records} record(s), ${sealer.seconds} s (over ${maxSealLagS} s): read the active sealer's log (${sealer.leaseHolder ?? "none holds the lease"}); restart it if it is stuck (hookbus sealer), a standby takes over when its lease expires`,
    );
  return problems;
}

export function formatComponents(
  sealer: SealerStatus | Absent,
  indexer: IndexerStatus | Absent,
): string[] {
  const lines: string[] = [""];
  if (!sealer.present) lines.push("sealer: no sealer");
  else
    lines.push(
      `sealer: ${sealer.leaseHolder === undefined ? "NO LEASE HOLDER" : `active ${sealer.leaseHolder}${sealer.leaseKey === undefined ? " (no key in its lease)" : ` (key ${sealer.leaseKey.slice(0, 12)}…)`}`}  evidence lag ${sealer.records} record(s), ${sealer.seconds} s  (sealed seq ${sealer.sealedSeq}, log ${sealer.logLastSeq})`,
    );
  if (!indexer.present) lines.push("indexer: no indexer");
  else
    lines.push(
      `indexer: ${indexer.consumer}  index lag ${indexer.records} record(s), ${indexer.seconds} s`,
    );
  return lines;
}
