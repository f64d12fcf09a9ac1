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
      for (const key of Object.keys(value).sort()) {
        const member = write((value as Record<string, unknown>)[key]);
        if (member === undefined) continue;
        if (out.length > 1) out += ",";
        out += JSON.stringify(key) + ":" + member;
      }
      return out + "}";
    }
    default:
      return undefined; // undefined, function, symbol
  }
}
