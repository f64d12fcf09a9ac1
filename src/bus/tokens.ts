/**
 * Agent and session ids become NATS subject tokens and KV keys, where `.`, `*`, `>`, whitespace
 * and most punctuation would break the subject or the key. Every character outside
 * `[A-Za-z0-9_-]` is written as `=XX` per UTF-8 byte (uppercase hex). `=` is legal in both
 * subjects and KV keys, ordinary ids (`agent-7`, `sess_42`) stay readable, and decoding is exact.
 */
const SAFE = /^[A-Za-z0-9_-]$/;
const ALL_SAFE = /^[A-Za-z0-9_-]+$/;

export function encodeToken(value: string): string {
  if (value.length === 0) throw new RangeError("an id used as a subject token must not be empty");
  if (ALL_SAFE.test(value)) return value; // the common case: nothing to escape, no copy
  let out = "";
  for (const char of value) {
    if (SAFE.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, "utf8"))
      out += `=${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export function decodeToken(token: string): string {
  if (!token.includes("=")) return token;
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    const char = token[i]!;
    if (char === "=") {
      const hex = token.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex))
        throw new RangeError(`malformed token escape at ${i} in ${JSON.stringify(token)}`);
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(char.charCodeAt(0));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** Policy names are chosen by operators and used verbatim as tokens and queue names. */
export const POLICY_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
