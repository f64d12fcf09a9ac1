/**
 * Strict JSON for files people write by hand (registry documents, policy test fixtures): every
 * mistake names its line and column, and a key given twice in one object is an error. JSON.parse
 * silently keeps the last of two `"priority"` keys, so a registry could apply a value its author
 * never saw; and its messages give a character offset at best.
 */
import { HookbusError, type ErrorCode } from "./errors.js";

/** Deeper nesting than this is refused (recursion is bounded, as every input is). */
export const MAX_JSON_DEPTH = 128;

export interface JsonTextOptions {
  /** The code of the error thrown for a mistake. */
  code: ErrorCode;
  /** Named in messages: a path, or `fixtures.ndjson line 4`. */
  source: string;
  /** Added to reported line numbers (NDJSON: the line's number in the file, minus one). */
  lineOffset?: number;
}

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}

class Parser {
  private pos = 0;

  constructor(private readonly text: string) {}

  parseDocument(): unknown {
    this.space();
    const value = this.value(0);
    this.space();
    if (this.pos < this.text.length) this.fail("unexpected text after the JSON value");
    return value;
  }

  private fail(message: string, at = this.pos): never {
    throw new JsonSyntaxError(message, at);
  }

  private space(): void {
    while (this.pos < this.text.length && " \t\n\r".includes(this.text[this.pos]!)) this.pos++;
  }

  private describeHere(): string {
    const ch = this.text[this.pos];
    return ch === undefined ? "the end of the file" : JSON.stringify(ch);
  }

  private value(depth: number): unknown {
    if (depth > MAX_JSON_DEPTH) this.fail(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    const ch = this.text[this.pos];
    if (ch === "{") return this.object(depth);
    if (ch === "[") return this.array(depth);
    if (ch === '"') return this.string();
    if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) return this.number();
    for (const [word, value] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    return this.fail(`expected a value, found ${this.describeHere()}`);
  }

  private object(depth: number): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.pos++; // {
    this.space();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return result;
    }
    for (;;) {
      this.space();
      if (this.text[this.pos] !== '"') this.fail(`expected a "key", found ${this.describeHere()}`);
      const keyAt = this.pos;
      const key = this.string();
      if (seen.has(key)) this.fail(`duplicate key ${JSON.stringify(key)} in one object`, keyAt);
      seen.add(key);
      this.space();
      if (this.text[this.pos] !== ":")
        this.fail(`expected ":" after a key, found ${this.describeHere()}`);
      this.pos++;
      this.space();
      // defineProperty: a "__proto__" key is data, not the object's prototype.
      Object.defineProperty(result, key, {
        value: this.value(depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.space();
      const next = this.text[this.pos];
      if (next === ",") {
        this.pos++;
        continue;
      }
      if (next === "}") {
        this.pos++;
        return result;
      }
      this.fail(`expected "," or "}" in an object, found ${this.describeHere()}`);
    }
  }

  private array(depth: number): unknown[] {
    const result: unknown[] = [];
    this.pos++; // [
    this.space();
    if (this.text[this.pos] === "]") {
      this.pos++;
      return result;
    }
    for (;;) {
      this.space();
      result.push(this.value(depth + 1));
      this.space();
      const next = this.text[this.pos];
      if (next === ",") {
        this.pos++;
        continue;
      }
      if (next === "]") {
        this.pos++;
        return result;
      }
      this.fail(`expected "," or "]" in an array, found ${this.describeHere()}`);
    }
  }

  private string(): string {
    const start = this.pos;
    this.pos++; // opening quote
    for (;;) {
      const ch = this.text[this.pos];
      if (ch === undefined || ch === "\n") this.fail("unterminated string", start);
      if (ch === '"') break;
      this.pos += ch === "\\" ? 2 : 1;
    }
    this.pos++;
    try {
      // The string's own escapes are JSON's: let JSON.parse decode them.
      return JSON.parse(this.text.slice(start, this.pos)) as string;
    } catch {
      return this.fail("invalid string (a bad escape or a control character)", start);
    }
  }

  private number(): number {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(
      this.text.slice(this.pos, this.pos + 400),
    );
    if (match === null) return this.fail(`invalid number at ${this.describeHere()}`);
    this.pos += match[0].length;
    return Number(match[0]);
  }
}

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < position && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: position - lineStart + 1 };
}

/** Parse JSON text; a mistake is a coded error naming the source, line and column. */
export function parseJsonText(text: string, options: JsonTextOptions): unknown {
  try {
    return new Parser(text).parseDocument();
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    const at = lineAndColumn(text, error.position);
    const line = at.line + (options.lineOffset ?? 0);
    throw new HookbusError(
      options.code,
      `${options.source}:${line}:${at.column}: ${error.message}`,
      { line, column: at.column },
    );
  }
}
