/**
 * Reading a namespace's log stream back: every stored message, in stream order, decoded with the
 * namespace's body codec.
 */
import type { MsgHdrs } from "@nats-io/transport-node";
import { type Bus } from "../../src/index.js";
import { LogRecord, type DecisionRecord } from "../../src/log/record.js";

export interface StoredMessage {
  seq: number;
  subject: string;
  headers: MsgHdrs | undefined;
  /** `Hookbus-Encoding` of the stored message (undefined: plain JSON). */
  encoding: string | undefined;
  /** Size of the stored message body, in bytes. */
  storedBytes: number;
  /** The decoded body (not validated). */
  body: unknown;
}

export interface StoredRecord extends Omit<StoredMessage, "body"> {
  record: LogRecord;
}

/**
 * Every stored message of the namespace's log stream, in order (none for an empty log).
 * `gaps`: a sequence with no message (deleted) is skipped, or (`"throw"`) fails the read.
 */
export async function readStoredMessages(
  bus: Bus,
  options: { gaps?: "skip" | "throw" } = {},
): Promise<StoredMessage[]> {
  const stream = bus.subjects.logStream;
  const info = await bus.jsm.streams.info(stream);
  const messages: StoredMessage[] = [];
  for (
    let seq = info.state.first_seq;
    seq <= info.state.last_seq && seq > 0 && info.state.messages > 0;
    seq++
  ) {
    const msg = await bus.jsm.streams.getMessage(stream, { seq });
    if (msg === null) {
      if (options.gaps === "throw") throw new Error(`log record ${seq} is missing`);
      continue;
    }
    messages.push({
      seq: msg.seq,
      subject: msg.subject,
      headers: msg.header,
      encoding: msg.header?.get("Hookbus-Encoding") || undefined,
      storedBytes: msg.data.length,
      body: await bus.codec.decodeMessage({ data: msg.data, headers: msg.header }),
    });
  }
  return messages;
}

/** Every record of the namespace's log stream with where it is stored, parsed as a LogRecord. */
export async function readStoredLog(
  bus: Bus,
  options: { gaps?: "skip" | "throw" } = {},
): Promise<StoredRecord[]> {
  return (await readStoredMessages(bus, options)).map(({ body, ...stored }) => ({
    ...stored,
    record: LogRecord.parse(body),
  }));
}

/** Every record of the namespace's log stream, in stream order; a missing record fails the read. */
export async function readLog(bus: Bus): Promise<LogRecord[]> {
  return (await readStoredLog(bus, { gaps: "throw" })).map((stored) => stored.record);
}

export function decisions(records: readonly LogRecord[]): DecisionRecord[] {
  return records.filter((r): r is DecisionRecord => r.kind === "decision");
}

/** How many records each callId has. */
export function countByCallId(records: readonly { callId: string }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.callId, (counts.get(r.callId) ?? 0) + 1);
  return counts;
}
