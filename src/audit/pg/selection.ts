/**
 * Replay's selection through the index: the index says which records (by stream sequence), the
 * log gives them (a direct get per sequence, a bounded window in flight), so the records replayed
 * are the log's own bytes, never the index's copy.
 */
import type { Bus } from "../../bus/bus.js";
import { HookbusError } from "../../foundation/errors.js";
import type { LogEntry } from "../../log/reader.js";
import { LogRecord } from "../../log/record.js";
import { assertSelection, type LogSelection } from "../../log/selection.js";
import type { PgPool } from "./pool.js";
import { queryIndexAll } from "./query.js";

/** Gets in flight while reading a selection from the log. */
const WINDOW = 64;

/** One record read from the log by stream sequence (the log's own bytes, checked against the schema). */
export async function fetchEntry(bus: Bus, seq: number): Promise<LogEntry> {
  const stream = bus.subjects.logStream;
  const msg = await bus.jsm.streams.getMessage(stream, { seq });
  if (msg === null)
    throw new HookbusError(
      "HOOKBUS_LOG_UNAVAILABLE",
      `log record ${seq} is in the index but not in ${stream} (expired or the index belongs to another log)`,
      { seq, stream },
    );
  const decoded = await bus.codec.decodeMessage({ data: msg.data, headers: msg.header });
  const parsed = LogRecord.safeParse(decoded);
  if (!parsed.success)
    throw new HookbusError(
      "HOOKBUS_BAD_MESSAGE",
      `log record ${seq} does not match the record schema: ${parsed.error.message}`,
      { seq },
    );
  return {
    seq,
    subject: msg.subject,
    address: bus.subjects.parseAudit(msg.subject),
    storedAt: msg.time,
    record: parsed.data,
  };
}

async function* sequences(
  pool: PgPool,
  namespace: string,
  selection: LogSelection,
): AsyncGenerator<number> {
  const base = {
    ...(selection.agentId === undefined ? {} : { agentId: selection.agentId }),
    ...(selection.since === undefined ? {} : { since: selection.since }),
    ...(selection.until === undefined ? {} : { until: selection.until }),
  };
  const sessions = [...new Set(selection.sessions ?? [])];
  const filters =
    sessions.length === 0 ? [base] : sessions.map((s) => ({ ...base, sessionKey: s }));
  for (const filter of filters)
    for await (const entry of queryIndexAll(pool, namespace, filter)) yield entry.seq;
}

/** The selected records (per session, in log order), chosen by the index and read from the log. */
export async function* readIndexedSelection(
  bus: Bus,
  pool: PgPool,
  selection: LogSelection,
): AsyncGenerator<LogEntry> {
  assertSelection(selection);
  const window: Promise<LogEntry>[] = [];
  for await (const seq of sequences(pool, bus.subjects.namespace, selection)) {
    const next = fetchEntry(bus, seq);
    next.catch(() => {}); // awaited in order below; not an unhandled rejection meanwhile
    window.push(next);
    if (window.length >= WINDOW) yield await window.shift()!;
  }
  while (window.length > 0) yield await window.shift()!;
}
