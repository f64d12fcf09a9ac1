/**
 * Appends records to the log. A decision is released only after its record is acknowledged, so
 * the writer retries through NATS reconnects and JetStream hiccups until the caller's deadline.
 * Message ids are deterministic per call, so a retry (ours, or a coordinator handling the agent's
 * retry of the same call) stores one record.
 */
import type { Bus } from "../bus/bus.js";
import { bodyHeaders } from "../bus/codec.js";
import { Header } from "../bus/headers.js";
import { HookbusError } from "../errors.js";
import { LogRecord } from "../log/record.js";

export interface Appended {
  seq: number;
  /** The log already held a record with this message id (at `seq`). */
  duplicate: boolean;
}

export class LogWriter {
  constructor(private readonly bus: Bus) {}

  async append(
    subject: string,
    record: LogRecord,
    msgID: string,
    deadline: number,
  ): Promise<Appended> {
    const encoded = await this.bus.codec.encode(record);
    const extra: Record<string, string> = {};
    if ("callId" in record) extra[Header.CallId] = record.callId;
    let attempt = 0;
    let lastError: unknown;
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0 && attempt > 0) break;
      try {
        const ack = await this.bus.js.publish(subject, encoded.data, {
          msgID,
          headers: bodyHeaders(encoded, extra),
          timeout: Math.max(250, Math.min(remaining, 5000)),
        });
        return { seq: ack.seq, duplicate: ack.duplicate };
      } catch (error) {
        lastError = error;
        attempt++;
        this.bus.logger.warn({ err: error, subject, attempt }, "log append failed, retrying");
        await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 1000)));
      }
    }
    throw new HookbusError(
      "HOOKBUS_LOG_UNAVAILABLE",
      `could not store the record in the log: ${String(lastError)}`,
      { subject },
      lastError,
    );
  }

  /** Read back a stored record (after a duplicate append, the stored one is the truth). */
  async read(seq: number): Promise<LogRecord> {
    const msg = await this.bus.jsm.streams.getMessage(this.bus.subjects.logStream, { seq });
    if (msg === null)
      throw new HookbusError("HOOKBUS_INTERNAL", `log record ${seq} vanished`, { seq });
    return LogRecord.parse(
      await this.bus.codec.decodeMessage({ data: msg.data, headers: msg.header }),
    );
  }
}
