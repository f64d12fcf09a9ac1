/**
 * Reading only the top-level fields of a stored record that the index's columns need, in one
 * pass over its bytes, without parsing the rest (the event, the verdicts' mutations).
 *
 * Trust boundary: the log is written only by coordinators (the permission matrix gives no one
 * else publish rights on `<ns>.audit.>`), which build each record with JSON.stringify from parts
 * they validated and check its size and depth before writing it (docs/security.md). The indexer
 * therefore does not validate every byte of a record itself: the one pass checks the record's
 * nesting depth (the same bound as a full decode), finds the values of the fields asked for and
 * parses those alone, and PostgreSQL's jsonb parser reads the whole record when it is stored. A
 * record the pass cannot read (not an object, a key with an escape, bytes that are not UTF-8,
 * deeper than the bound) is decoded in full as before, with the same errors; a record whose
 * unread part is not JSON is refused by PostgreSQL and indexed as `invalid` with its reason
 * (writer.ts), never lost and never a reason to stop.
 */
import { isUtf8 } from "node:buffer";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const LETTER_U = 0x75;

export interface ScannedRecord {
  /** The fields asked for that the record has, parsed (the last one when a key repeats). */
  fields: Record<string, unknown>;
  /** A field asked to be located only, parsed now (undefined when absent or not JSON). */
  parse(key: string): unknown;
  /**
   * Whether some string holds a `\u` escape: then the text may hold what jsonb refuses (a NUL, a
   * lone surrogate), and the record must be written again (projection.ts, jsonForPg).
   */
  escapes: boolean;
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** A pass over one record: `i` is the next byte to read; -1 from a step means "cannot read". */
class Pass {
  escapes = false;
  /** Whether the last string read held a backslash. */
  backslash = false;
  constructor(
    readonly bytes: Uint8Array,
    readonly maxDepth: number,
  ) {}

  space(i: number): number {
    while (i < this.bytes.length && isSpace(this.bytes[i]!)) i++;
    return i;
  }

  /** `i` at an opening quote: the index after the closing one. */
  string(i: number): number {
    const b = this.bytes;
    this.backslash = false;
    for (i++; i < b.length; i++) {
      const c = b[i]!;
      if (c === QUOTE) return i + 1;
      if (c === BACKSLASH) {
        this.backslash = true;
        if (b[i + 1] === LETTER_U) this.escapes = true;
        i++;
      }
    }
    return -1;
  }

  /** `i` at an opening brace or bracket at nesting `depth`: the index after its close. */
  nested(i: number, depth: number): number {
    const b = this.bytes;
    let level = 0;
    while (i < b.length) {
      const c = b[i]!;
      if (c === QUOTE) {
        i = this.string(i);
        if (i < 0) return -1;
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (depth + ++level > this.maxDepth) return -1;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (--level === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }

  /** `i` at a value of the top-level object: the index after it. */
  value(i: number): number {
    const b = this.bytes;
    const c = b[i];
    this.backslash = true;
    if (c === QUOTE) return this.string(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) return this.nested(i, 1);
    const start = i;
    while (i < b.length) {
      const d = b[i]!;
      if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
      i++;
    }
    return i > start ? i : -1;
  }
}

/**
 * The value between `start` and `end`; a string without a backslash (`plain`) is read without
 * JSON.parse. Undefined when it is not JSON.
 */
function parseValue(text: Buffer, start: number, end: number, plain: boolean): unknown {
  try {
    if (plain && text[start] === QUOTE) return text.toString("utf8", start + 1, end - 1);
    return JSON.parse(text.toString("utf8", start, end));
  } catch {
    return undefined;
  }
}

/**
 * The top-level fields `wanted` of the record in `bytes`, parsed, and those in `located` found
 * (to be parsed only when asked for); undefined when this pass cannot read the record (then
 * decode it in full). `maxDepth` bounds nesting as a full decode does.
 */
export function scanRecord(
  bytes: Uint8Array,
  maxDepth: number,
  wanted: ReadonlySet<string>,
  located: ReadonlySet<string> = new Set(),
): ScannedRecord | undefined {
  if (maxDepth < 1 || !isUtf8(bytes)) return undefined;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pass = new Pass(bytes, maxDepth);
  const fields: Record<string, unknown> = {};
  const found = new Map<string, [number, number, boolean]>();
  const done = (at: number): ScannedRecord | undefined =>
    pass.space(at) !== bytes.length
      ? undefined
      : {
          fields,
          escapes: pass.escapes,
          parse: (key) => {
            const where = found.get(key);
            return where === undefined ? undefined : parseValue(text, ...where);
          },
        };
  let i = pass.space(0);
  if (bytes[i] !== OPEN_BRACE) return undefined;
  i = pass.space(i + 1);
  if (bytes[i] === CLOSE_BRACE) return done(i + 1);
  for (;;) {
    if (bytes[i] !== QUOTE) return undefined;
    const keyEnd = pass.string(i);
    // A key with an escape is left to the full decode (no field the index reads has one).
    if (keyEnd < 0 || pass.backslash) return undefined;
    const key = text.toString("latin1", i + 1, keyEnd - 1);
    i = pass.space(keyEnd);
    if (bytes[i] !== COLON) return undefined;
    const start = pass.space(i + 1);
    const stop = pass.value(start);
    if (stop < 0) return undefined;
    if (wanted.has(key)) {
      const value = parseValue(text, start, stop, !pass.backslash);
      if (value === undefined) return undefined;
      fields[key] = value;
    } else if (located.has(key)) found.set(key, [start, stop, !pass.backslash]);
    i = pass.space(stop);
    if (bytes[i] === CLOSE_BRACE) return done(i + 1);
    if (bytes[i] !== COMMA) return undefined;
    i = pass.space(i + 1);
  }
}
