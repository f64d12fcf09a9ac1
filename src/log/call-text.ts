/**
 * Where a call's `context` and `event` are in the call's own JSON text, so that its decision
 * record can carry those bytes instead of writing the parsed values out again (issue 35;
 * docs/performance.md, "The record written from its parts").
 *
 * Only for a body the codec already parsed, and so checked: valid JSON, no key twice in any
 * object (foundation/json-keys.ts; otherwise the span found here could be a value the parser
 * dropped). The bytes are used only when reading them gives exactly the values JSON.stringify
 * would have written: valid UTF-8 (no U+FFFD a reader would make differently from the agent's
 * bytes), and no number whose text JSON.stringify would change in value (one that overflows a
 * double, which it writes as `null`, or a negative zero, which it writes as `0`). For those, and
 * for a top-level key spelled with an escape, the answer is undefined and the record is written
 * from the parsed values as before.
 */
import { isUtf8 } from "node:buffer";
import { JsonByte } from "../foundation/limits.js";

const { QUOTE, BACKSLASH, OPEN_BRACE, OPEN_BRACKET, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA } =
  JsonByte;
const MINUS = 0x2d;
const ZERO = 0x30;
const LETTER_E = 0x65;
const CAPITAL_E = 0x45;

export interface CallText {
  context: Uint8Array;
  event: Uint8Array;
}

const CONTEXT = Buffer.from("context");
const EVENT = Buffer.from("event");

/** The call's text of its `context` and `event` values, or undefined (see above). */
export function callText(body: Uint8Array): CallText | undefined {
  const scan = new Scan(body);
  let context: Uint8Array | undefined;
  let event: Uint8Array | undefined;
  if (scan.skipSpace() !== OPEN_BRACE) return undefined;
  scan.i++;
  for (;;) {
    if (scan.skipSpace() !== QUOTE) return undefined;
    const keyStart = scan.i + 1;
    scan.skipString();
    const key = body.subarray(keyStart, scan.i - 1);
    if (scan.skipSpace() !== COLON) return undefined;
    scan.i++;
    scan.skipSpace();
    const valueStart = scan.i;
    if (!scan.skipValue()) return undefined;
    const value = body.subarray(valueStart, scan.i);
    if (sameBytes(key, CONTEXT)) context = value;
    else if (sameBytes(key, EVENT)) event = value;
    const next = scan.skipSpace();
    if (next === CLOSE_BRACE) break;
    if (next !== COMMA) return undefined;
    scan.i++;
  }
  if (context === undefined || event === undefined) return undefined;
  if (!isUtf8(context) || !isUtf8(event)) return undefined;
  return { context, event };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

function isSpace(b: number | undefined): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** A cursor over text known to be valid JSON (the codec parsed it). */
class Scan {
  i = 0;
  constructor(private readonly bytes: Uint8Array) {}

  /** Past white space: the byte there (undefined at the end). */
  skipSpace(): number | undefined {
    while (isSpace(this.bytes[this.i])) this.i++;
    return this.bytes[this.i];
  }

  /** At an opening quote: past the closing one. */
  skipString(): void {
    const bytes = this.bytes;
    for (this.i++; this.i < bytes.length; this.i++) {
      const c = bytes[this.i];
      if (c === BACKSLASH) this.i++;
      else if (c === QUOTE) break;
    }
    this.i++;
  }

  /** At a value: past it; false when it holds a number JSON.stringify would change. */
  skipValue(): boolean {
    const bytes = this.bytes;
    let depth = 0;
    while (this.i < bytes.length) {
      const b = bytes[this.i]!;
      if (b === QUOTE) this.skipString();
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        depth++;
        this.i++;
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        if (depth === 0) return true;
        depth--;
        this.i++;
      } else if (b === COMMA && depth === 0) return true;
      else if (b === MINUS || (b >= ZERO && b <= 0x39)) {
        if (!this.skipNumber()) return false;
      } else this.i++;
      if (depth === 0 && (b === CLOSE_BRACE || b === CLOSE_BRACKET || b === QUOTE)) return true;
    }
    return depth === 0;
  }

  /**
   * At a number: past it; false for one that may not survive JSON.stringify: an exponent (the
   * only way to overflow a double in a short text), a negative zero, or more than 300 digits.
   */
  private skipNumber(): boolean {
    const bytes = this.bytes;
    const start = this.i;
    if (bytes[start] === MINUS && bytes[start + 1] === ZERO) return false;
    for (this.i++; this.i < bytes.length; this.i++) {
      const c = bytes[this.i]!;
      if (c === LETTER_E || c === CAPITAL_E) return false;
      if (!((c >= ZERO && c <= 0x39) || c === 0x2e || c === MINUS || c === 0x2b)) break;
    }
    return this.i - start <= 300;
  }
}
