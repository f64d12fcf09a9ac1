/**
 * Rows in PostgreSQL's binary COPY format (the `COPY … FROM STDIN (FORMAT binary)` stream: a
 * signature, then per row a field count and each field as a length and its bytes, then -1):
 * no text to build and for PostgreSQL to parse per value, and a record's stored JSON bytes are
 * copied as they are into its json field.
 */

const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");
/** Microseconds between the Unix epoch and PostgreSQL's (2000-01-01T00:00:00Z). */
const PG_EPOCH_US = 946_684_800_000_000;
const TWO_32 = 4_294_967_296;
/** Element type OIDs of the arrays written (pg_type). */
const TEXT_OID = 25;
const FLOAT8_OID = 701;

/**
 * Text PostgreSQL cannot store in a text column: NUL (and a lone surrogate, which Buffer's UTF-8
 * encoding already writes as U+FFFD). Each becomes U+FFFD, as in projection.ts's jsonForPg.
 */
function pgSafeText(s: string): string {
  return s.includes("\0") ? s.replaceAll("\0", "\ufffd") : s;
}

export class CopyRows {
  private buf: Buffer;
  private at = 0;

  constructor(expectedBytes: number) {
    this.buf = Buffer.allocUnsafe(Math.max(1024, expectedBytes));
    this.bytes(SIGNATURE);
    this.int32(0); // flags
    this.int32(0); // header extension length
  }

  /** Starts a row of `fields` fields. */
  row(fields: number): void {
    this.room(2);
    this.buf.writeInt16BE(fields, this.at);
    this.at += 2;
  }

  null(): void {
    this.int32(-1);
  }

  int8(n: number): void {
    this.int32(8);
    this.int64(n);
  }

  float8(n: number | null): void {
    if (n === null) return this.null();
    this.int32(8);
    this.room(8);
    this.buf.writeDoubleBE(n, this.at);
    this.at += 8;
  }

  bool(b: boolean): void {
    this.int32(1);
    this.room(1);
    this.buf[this.at++] = b ? 1 : 0;
  }

  text(s: string | null): void {
    if (s === null) return this.null();
    this.utf8(pgSafeText(s));
  }

  /** A timestamptz: microseconds since PostgreSQL's epoch. */
  timestamptz(d: Date | null): void {
    if (d === null) return this.null();
    this.int32(8);
    this.int64(d.getTime() * 1000 - PG_EPOCH_US);
  }

  /** A json field: the JSON text itself (PostgreSQL checks that it is JSON). */
  json(json: string | Uint8Array | null): void {
    if (json === null) return this.null();
    if (typeof json === "string") return this.utf8(json);
    this.int32(json.length);
    this.bytes(json);
  }

  /**
   * A one-dimensional text[] of the values `name` picks (array_send's layout: dimensions, a
   * has-nulls flag, the element type, then each element as a field); null when there are none.
   */
  textArray<T>(items: readonly T[], name: (item: T) => string): void {
    if (items.length === 0) return this.null();
    const start = this.arrayHeader(items.length, false, TEXT_OID);
    for (const item of items) this.utf8(pgSafeText(name(item)));
    this.endField(start);
  }

  /** A one-dimensional float8[] of the values `value` picks, null elements allowed. */
  float8Array<T>(items: readonly T[], value: (item: T) => number | null): void {
    if (items.length === 0) return this.null();
    const start = this.arrayHeader(
      items.length,
      items.some((i) => value(i) === null),
      FLOAT8_OID,
    );
    for (const item of items) this.float8(value(item));
    this.endField(start);
  }

  /** The stream, ended by the trailer. */
  finish(): Buffer {
    this.room(2);
    this.buf.writeInt16BE(-1, this.at);
    this.at += 2;
    return this.buf.subarray(0, this.at);
  }

  /** A field of `s`'s UTF-8 bytes. */
  private utf8(s: string): void {
    this.room(4 + 3 * s.length);
    const written = this.buf.write(s, this.at + 4, "utf8");
    this.buf.writeInt32BE(written, this.at);
    this.at += 4 + written;
  }

  /** Opens an array field (its length written by endField) and writes its header. */
  private arrayHeader(length: number, hasNull: boolean, elementType: number): number {
    this.int32(0); // the field's length, set by endField
    const start = this.at;
    this.int32(1); // dimensions
    this.int32(hasNull ? 1 : 0);
    this.int32(elementType);
    this.int32(length);
    this.int32(1); // lower bound
    return start;
  }

  /** Sets the length of the field whose bytes began at `start`. */
  private endField(start: number): void {
    this.buf.writeInt32BE(this.at - start, start - 4);
  }

  private int32(n: number): void {
    this.room(4);
    this.buf.writeInt32BE(n, this.at);
    this.at += 4;
  }

  /** An integer within ±2^53 as a big-endian int64. */
  private int64(n: number): void {
    this.room(8);
    const high = Math.floor(n / TWO_32);
    this.buf.writeInt32BE(high, this.at);
    this.buf.writeUInt32BE(n - high * TWO_32, this.at + 4);
    this.at += 8;
  }

  private bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + n));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}
