/**
 * Reading only the fields of a stored record that the index's columns need, in one pass over its
 * text (its UTF-8 bytes decoded once), without parsing the rest (the event, the verdicts and their
 * mutations): a string is skipped by a native search for its closing quote when no backslash is
 * ahead, and the values asked for are sliced from the text.
 *
 * Trust boundary: the log is written only by coordinators (the permission matrix gives no one
 * else publish rights on `<ns>.audit.>`), which build each record with JSON.stringify from parts
 * they validated and check its size and depth before writing it (docs/security.md). The indexer
 * therefore does not validate every byte of a record itself: the one pass checks the record's
 * nesting depth (the same bound as a full decode), finds the values of the fields asked for and
 * parses those alone, and PostgreSQL's JSON parser checks the whole record when it is stored. A
 * record the pass cannot read (not an object, a key with an escape, bytes that are not UTF-8,
 * deeper than the bound) is decoded in full as before, with the same errors; a record whose
 * unread part is not JSON is refused by PostgreSQL and indexed as `invalid` with its reason
 * (writer.ts), never lost and never a reason to stop.
 */
import { isUtf8 } from "node:buffer";
import { JsonByte } from "../foundation/limits.js";

const {
  QUOTE,
  BACKSLASH,
  OPEN_BRACE,
  CLOSE_BRACE,
  OPEN_BRACKET,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  LETTER_U,
} = JsonByte;

/**
 * What to read of an object: per key, `true` (its value, parsed), the fields of an object (a
 * nested shape), or `{ each }` (an array: of each object in it, those fields). A value of another
 * type than the shape expects is parsed whole, as JSON.parse would give it.
 */
export interface Shape {
  readonly [key: string]: true | Shape | { readonly each: Shape };
}

type Field = { name: string; read: true | Compiled | { each: Compiled } };
/** A shape's keys by length, compared without building a string per key. */
type Compiled = Map<number, Field[]>;

const compiledShapes = new WeakMap<Shape, Compiled>();

function compile(shape: Shape): Compiled {
  let compiled = compiledShapes.get(shape);
  if (compiled !== undefined) return compiled;
  compiled = new Map();
  for (const [name, read] of Object.entries(shape)) {
    const field: Field = {
      name,
      read:
        read === true
          ? true
          : "each" in read && typeof read.each === "object"
            ? { each: compile(read.each) }
            : compile(read),
    };
    const same = compiled.get(name.length) ?? [];
    same.push(field);
    compiled.set(name.length, same);
  }
  compiledShapes.set(shape, compiled);
  return compiled;
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** Thrown inside a pass: the record cannot be read this way (decode it in full). */
const UNREADABLE = new Error("unreadable by the scan");

/** One pass over one record; `i` is the next byte to read. */
class Pass {
  /** Whether some string holds a `\u` escape. */
  escapes = false;
  /** Whether the last string read held a backslash. */
  backslash = false;
  /** Where the next backslash is at or after (stale when below `i`; Infinity: none). */
  private nextBackslash = -1;
  i = 0;
  constructor(
    /** The record decoded (its structure is ASCII: indexes into the text work as into bytes). */
    readonly text: string,
    readonly maxDepth: number,
  ) {}

  space(): void {
    const t = this.text;
    while (this.i < t.length && isSpace(t.charCodeAt(this.i))) this.i++;
  }

  expect(byte: number): void {
    if (this.text.charCodeAt(this.i) !== byte) throw UNREADABLE;
    this.i++;
  }

  /** At an opening quote: past the closing one. */
  string(): void {
    const t = this.text;
    this.backslash = false;
    // Most strings (most records) hold no backslash: then the closing quote is the next quote,
    // found natively rather than character by character.
    if (this.nextBackslash < this.i) {
      const at = t.indexOf("\\", this.i);
      this.nextBackslash = at < 0 ? Infinity : at;
    }
    const close = t.indexOf('"', this.i + 1);
    if (close < 0) throw UNREADABLE;
    if (close < this.nextBackslash) {
      this.i = close + 1;
      return;
    }
    for (let i = this.i + 1; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (c === QUOTE) {
        this.i = i + 1;
        return;
      }
      if (c === BACKSLASH) {
        this.backslash = true;
        if (t.charCodeAt(i + 1) === LETTER_U) this.escapes = true;
        i++;
      }
    }
    throw UNREADABLE;
  }

  /** At an opening brace or bracket at nesting `depth`: past its close, unread. */
  skipNested(depth: number): void {
    const t = this.text;
    let level = 0;
    while (this.i < t.length) {
      const c = t.charCodeAt(this.i);
      if (c === QUOTE) {
        this.string();
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (depth + ++level > this.maxDepth) throw UNREADABLE;
      } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --level === 0) {
        this.i++;
        return;
      }
      this.i++;
    }
    throw UNREADABLE;
  }

  /** At a value at nesting `depth` (of its container): past it, unread. */
  skip(depth: number): void {
    const t = this.text;
    const c = t.charCodeAt(this.i);
    if (c === QUOTE) return this.string();
    if (c === OPEN_BRACE || c === OPEN_BRACKET) return this.skipNested(depth);
    const start = this.i;
    while (this.i < t.length) {
      const d = t.charCodeAt(this.i);
      if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
      this.i++;
    }
    if (this.i === start) throw UNREADABLE;
  }

  /** At a value: past it, parsed (a string without a backslash without JSON.parse). */
  parse(depth: number): unknown {
    const start = this.i;
    this.backslash = true;
    this.skip(depth);
    try {
      if (!this.backslash && this.text.charCodeAt(start) === QUOTE)
        return this.text.slice(start + 1, this.i - 1);
      return JSON.parse(this.text.slice(start, this.i));
    } catch {
      throw UNREADABLE;
    }
  }

  /** At a value to read as `read` (its container at nesting `depth`): past it, read. */
  read(read: Field["read"], depth: number): unknown {
    const c = this.text.charCodeAt(this.i);
    if (read === true) return this.parse(depth);
    if (read instanceof Map)
      return c === OPEN_BRACE ? this.object(read, depth + 1) : this.parse(depth);
    return c === OPEN_BRACKET ? this.array(read.each, depth + 1) : this.parse(depth);
  }

  /** At `{` at nesting `depth`: past its `}`, with the fields `shape` names. */
  object(shape: Compiled, depth: number): Record<string, unknown> {
    if (depth > this.maxDepth) throw UNREADABLE;
    const out: Record<string, unknown> = {};
    this.i++;
    this.space();
    if (this.text.charCodeAt(this.i) === CLOSE_BRACE) {
      this.i++;
      return out;
    }
    for (;;) {
      if (this.text.charCodeAt(this.i) !== QUOTE) throw UNREADABLE;
      const keyStart = this.i + 1;
      this.string();
      // A key with an escape is left to the full decode (no field the index reads has one).
      if (this.backslash) throw UNREADABLE;
      const field = this.field(shape, keyStart, this.i - 1);
      this.space();
      this.expect(COLON);
      this.space();
      if (field === undefined) this.skip(depth);
      else out[field.name] = this.read(field.read, depth);
      this.space();
      if (this.text.charCodeAt(this.i) === CLOSE_BRACE) {
        this.i++;
        return out;
      }
      this.expect(COMMA);
      this.space();
    }
  }

  /** At `[` at nesting `depth`: past its `]`, each object read as `shape`, anything else parsed. */
  array(shape: Compiled, depth: number): unknown[] {
    if (depth > this.maxDepth) throw UNREADABLE;
    const out: unknown[] = [];
    this.i++;
    this.space();
    if (this.text.charCodeAt(this.i) === CLOSE_BRACKET) {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(
        this.text.charCodeAt(this.i) === OPEN_BRACE
          ? this.object(shape, depth + 1)
          : this.parse(depth),
      );
      this.space();
      if (this.text.charCodeAt(this.i) === CLOSE_BRACKET) {
        this.i++;
        return out;
      }
      this.expect(COMMA);
      this.space();
    }
  }

  /** The field of `shape` whose key is the text from `start` to `end`, if any. */
  field(shape: Compiled, start: number, end: number): Field | undefined {
    const candidates = shape.get(end - start);
    if (candidates === undefined) return undefined;
    const t = this.text;
    for (const field of candidates) {
      const { name } = field;
      let k = 0;
      while (k < name.length && name.charCodeAt(k) === t.charCodeAt(start + k)) k++;
      if (k === name.length) return field;
    }
    return undefined;
  }
}

export interface ScannedRecord {
  /** The fields `shape` names that the record has (the last one when a key repeats). */
  fields: Record<string, unknown>;
  /**
   * Whether some string holds a `\u` escape: then the text may hold what PostgreSQL's JSON
   * functions refuse (a NUL, a lone surrogate), and the record must be written again
   * (projection.ts, jsonForPg).
   */
  escapes: boolean;
}

/**
 * The fields `shape` names of the JSON object in `bytes`, or undefined when this pass cannot read
 * it (then decode it in full). `maxDepth` bounds nesting as a full decode does.
 */
export function scanRecord(
  bytes: Uint8Array,
  maxDepth: number,
  shape: Shape,
): ScannedRecord | undefined {
  if (maxDepth < 1 || !isUtf8(bytes)) return undefined;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  const pass = new Pass(text, maxDepth);
  try {
    pass.space();
    if (text.charCodeAt(pass.i) !== OPEN_BRACE) return undefined;
    const fields = pass.object(compile(shape), 1);
    pass.space();
    if (pass.i !== text.length) return undefined;
    return { fields, escapes: pass.escapes };
  } catch (error) {
    if (error === UNREADABLE) return undefined;
    throw error;
  }
}
