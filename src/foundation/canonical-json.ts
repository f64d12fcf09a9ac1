/** Canonical JSON: the one JSON form that is hashed (call digests, redaction hashes, the UI's log check). */
/**
 * The canonical JSON text of a value: object members sorted by key (UTF-16 code units, as
 * JavaScript's default sort), no whitespace, strings and numbers exactly as `JSON.stringify`
 * writes them. Members whose value is `undefined` (or a function or symbol) are left out and such
 * array elements become `null`, exactly as `JSON.stringify` does, so a record hashes the same
 * before it is stored and after it is read back. For JSON without lone surrogates this is RFC 8785
 * (JSON Canonicalization Scheme).
 */
export function canonicalize(value: unknown): string {
  const text = write(value);
  if (text === undefined) throw new TypeError("canonicalize: the value has no JSON form");
  return text;
}

function write(value: unknown): string | undefined {
  if (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case "string":
      return quoted(value);
    case "number":
    case "boolean":
      // JSON.stringify: shortest round-trip numbers, -0 as 0, non-finite as null; ES string escapes.
      return JSON.stringify(value);
    case "bigint":
      throw new TypeError("canonicalize: BigInt has no JSON form");
    case "object": {
      if (value === null) return "null";
      // Built by concatenation, not arrays and joins: this runs on every call (the call digest).
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ",";
          out += write(value[i]) ?? "null";
        }
        return out + "]";
      }
      let out = "{";
      const keys = sortedInPlace(Object.keys(value));
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const member = write((value as Record<string, unknown>)[key]);
        if (member === undefined) continue;
        if (out.length > 1) out += ",";
        out += quoted(key) + ":" + member;
      }
      return out + "}";
    }
    default:
      return undefined; // undefined, function, symbol
  }
}

/** What JSON.stringify would escape in a string: quote, backslash, controls, any surrogate. */
// eslint-disable-next-line no-control-regex -- the control characters are what must be escaped
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON.stringify writes it; most keys and values need no escape and skip its call. */
function quoted(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : '"' + text + '"';
}

/**
 * The keys in UTF-16 code-unit order (the default sort's, since `<` on strings compares code
 * units). Objects of a call have a handful of keys: an insertion sort in place allocates nothing,
 * where `Array.prototype.sort` copies into a scratch array on every object of every call digest.
 */
function sortedInPlace(keys: string[]): string[] {
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}
