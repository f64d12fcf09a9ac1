/**
 * Appends records to the log. A decision is released only after its record is acknowledged, so
 * the writer retries through NATS reconnects and JetStream hiccups until the caller's deadline.
 * Message ids are deterministic per call, so a retry (ours, or a coordinator handling the agent's
 * retry of the same call) stores one record.
 *
 * Nothing else happens on this path: tamper evidence is the sealer's job, after the fact
 * (src/sealer/, docs/tamper-evidence.md), so a decision pays one publish and no chain work. With
 * a signing key, each stored record is handed to the RecordSigner (a hash; the signature comes
 * later, for a whole batch) and carries the `Hookbus-Signer` header.
 */
import { beforeDeadline } from "../foundation/deadline.js";
import type { Bus } from "../bus/bus.js";
import { bodyHeaders, type EncodedBody } from "../bus/codec.js";
import { Header } from "../bus/headers.js";
import { appendToStream, isPermanentRefusal } from "../bus/stream-append.js";
import { HookbusError, isHookbusError } from "../foundation/errors.js";
import { sleep } from "../foundation/time.js";
import { LogRecord } from "../log/record.js";
import { backoffMs } from "../foundation/backoff.js";
import { RecordSignerHeader, RecordSignerRunHeader } from "../log/sign/batch.js";
import type { RecordSigner } from "./record-signer.js";
import type { RecordKeys } from "../privacy/record-keys.js";
import { isPromise } from "../foundation/hot-path.js";

/** Pauses between append attempts: 50 ms doubling to 1 s, always within the caller's deadline. */
const LOG_RETRY = { firstMs: 50, capMs: 1000 };

export interface Appended {
  seq: number;
  /** The log already held a record with this message id (at `seq`). */
  duplicate: boolean;
  /** The record as it was sent. */
  record: LogRecord;
  /**
   * For a duplicate: the record the log holds at `seq`. It is `record` itself when an earlier
   * attempt of this append was stored (its answer lost), another record otherwise.
   */
  stored?: LogRecord;
}

type StoredMsg = NonNullable<Awaited<ReturnType<Bus["jsm"]["streams"]["getMessage"]>>>;

export class LogWriter {
  constructor(
    private readonly bus: Bus,
    private readonly signer?: RecordSigner,
    /** With encryption on (docs/privacy.md): personal fields are sealed before the record is stored. */
    private readonly keys?: RecordKeys,
  ) {}

  async append(
    subject: string,
    record: LogRecord,
    msgID: string,
    deadline: number,
  ): Promise<Appended> {
    const extra: Record<string, string> = {};
    if ("callId" in record) extra[Header.CallId] = record.callId;
    if (record.callDigest !== undefined) extra[Header.CallDigest] = record.callDigest;
    if (this.signer !== undefined) {
      extra[RecordSignerHeader] = this.signer.publicKey;
      extra[RecordSignerRunHeader] = this.signer.epoch;
    }
    // Sealed once, outside the retries: every attempt stores the same bytes.
    const sealing = this.keys === undefined ? record : this.keys.sealNow(record);
    const stored = isPromise(sealing) ? await sealing : sealing;
    let encoded: EncodedBody | undefined;
    let attempt = 0;
    let lastError: unknown;
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0 && attempt > 0) break;
      try {
        // Encoding may store blobs (JetStream) for a large record, so it is retried too, and
        // bounded like the publish (at least 250 ms even for a record written past its deadline).
        if (encoded === undefined) {
          const now = this.bus.codec.encodeNow(stored, {
            deadline: Date.now() + Math.max(250, remaining),
          });
          encoded = isPromise(now) ? await now : now;
        }
        // Over the shared inbox, not js.publish (src/bus/stream-append.ts).
        const ack = await appendToStream(this.bus.nc, subject, encoded.data, {
          msgID,
          headers: bodyHeaders(encoded, extra),
          timeout: Math.max(250, Math.min(remaining, 5000)),
        });
        if (!ack.duplicate) {
          this.signer?.add(ack.seq, subject, encoded.data);
          return { seq: ack.seq, duplicate: false, record };
        }
        const readBy = Math.max(deadline, Date.now() + 250);
        const raw = await this.readRaw(ack.seq, readBy);
        // An earlier attempt of ours was stored (its answer lost): the same bytes, so ours to sign.
        // Another writer's record with this id is not.
        if (raw.subject === subject && Buffer.compare(raw.data, encoded.data) === 0) {
          this.signer?.add(ack.seq, subject, encoded.data);
        }
        return { seq: ack.seq, duplicate: true, record, stored: await this.decode(raw, readBy) };
      } catch (error) {
        // Classified before any retry: a record too large to encode, or one JetStream refuses
        // for good, fails now instead of spending the agent's deadline on hopeless attempts.
        if (isHookbusError(error, "HOOKBUS_PAYLOAD_TOO_LARGE")) throw error;
        if (isPermanentRefusal(error)) {
          throw new HookbusError(
            "HOOKBUS_LOG_UNAVAILABLE",
            `the log refused the record for good: ${(error as HookbusError).message}`,
            { subject },
            error,
          );
        }
        lastError = error;
        attempt++;
        this.bus.logger.warn({ err: error, subject, attempt }, "log append failed, retrying");
        // Never sleep past the deadline: the loop then gives up at once.
        await sleep(Math.max(0, Math.min(backoffMs(attempt, LOG_RETRY), deadline - Date.now())));
      }
    }
    throw new HookbusError(
      "HOOKBUS_LOG_UNAVAILABLE",
      `could not store the record in the log: ${String(lastError)}`,
      { subject },
      lastError,
    );
  }

  /**
   * Read back a stored record (after a duplicate append, the stored one is the truth), by
   * `deadline` when given (HOOKBUS_LOG_UNAVAILABLE otherwise).
   */
  async read(seq: number, deadline?: number): Promise<LogRecord> {
    return this.decode(await this.readRaw(seq, deadline), deadline);
  }

  private async readRaw(seq: number, deadline?: number): Promise<StoredMsg> {
    const get = this.bus.jsm.streams.getMessage(this.bus.subjects.logStream, { seq });
    const msg =
      deadline === undefined
        ? await get
        : await beforeDeadline(
            get,
            deadline,
            "HOOKBUS_LOG_UNAVAILABLE",
            () => `log record ${seq} could not be read back before the deadline`,
            { seq },
          );
    if (msg === null)
      throw new HookbusError("HOOKBUS_INTERNAL", `log record ${seq} vanished`, { seq });
    return msg;
  }

  private async decode(msg: StoredMsg, deadline?: number): Promise<LogRecord> {
    const record = LogRecord.parse(
      await this.bus.codec.decodeMessage(
        { data: msg.data, headers: msg.header },
        deadline === undefined ? {} : { deadline },
      ),
    );
    if (this.keys === undefined) return record;
    const opened = await this.keys.open(record);
    // A stored record whose key was erased cannot say what the call was told: fail, never answer "[erased]".
    if (opened.failure !== undefined)
      throw new HookbusError(
        "HOOKBUS_PRIVACY_KEY_UNAVAILABLE",
        `the stored record's personal fields cannot be opened (${opened.failure})`,
        {},
      );
    return opened.record;
  }
}
