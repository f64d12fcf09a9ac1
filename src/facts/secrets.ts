/**
 * Secrets, also after decoding. A key sent base64- or hex-encoded (`echo QUtJQ... | base64 -d`,
 * a token in a hex dump) passes a detector that reads the text as sent. Here every long enough
 * base64, base64url or hex run is decoded (two levels deep, so base64 of hex is found too) and
 * read by the same detectors (src/vocabulary/secrets.ts). Decoding is bounded: at most
 * MAX_DECODED_BYTES decoded per text and MAX_RUNS runs; what the bound leaves unread is a fact
 * (`truncated`), never silence.
 */
import { z } from "zod";
import { secretKinds } from "../vocabulary/secrets.js";

/** Decoded bytes read per call at most (all runs, all levels together). */
export const MAX_DECODED_BYTES = 256 * 1024;
/** Encoded runs decoded per call at most. */
export const MAX_RUNS = 256;
/** Levels of encoding looked through (base64 of hex of a key is two). */
export const MAX_DECODE_DEPTH = 2;

/** Runs shorter than this are not decoded: the shortest key the detectors know is 20 characters. */
const MIN_BASE64_RUN = 20;
const MIN_HEX_RUN = 32;

export const SecretFactSchema = z
  .object({
    kinds: z.array(z.string()).describe("Secret types in the text as sent (secrets.ts labels)"),
    decodedKinds: z
      .array(z.string())
      .describe("Secret types found only after decoding base64 or hex"),
    encodings: z
      .array(z.enum(["base64", "hex", "percent"]))
      .describe("Encodings a secret was found under"),
    truncated: z.boolean().describe("A decode bound was reached: part of the text was not decoded"),
  })
  .strict();
export type SecretFact = z.infer<typeof SecretFactSchema>;

// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const BINARY = /[\u0000-\u0008\u000e-\u001f\u007f\ufffd]/g;

interface Budget {
  bytes: number;
  runs: number;
  truncated: boolean;
}

/** Secret kinds in `texts` as sent, and those found only after decoding. Pure and bounded. */
export function secretFacts(texts: readonly string[]): SecretFact {
  const kinds = new Set<string>();
  for (const text of texts) for (const kind of secretKinds(text)) kinds.add(kind);
  const decoded = new Set<string>();
  const encodings = new Set<Encoding>();
  const budget: Budget = { bytes: MAX_DECODED_BYTES, runs: MAX_RUNS, truncated: false };
  for (const text of texts) scanDecoded(text, 1, budget, decoded, encodings);
  const decodedKinds = [...decoded].filter((kind) => !kinds.has(kind));
  return {
    kinds: [...kinds],
    decodedKinds,
    encodings: decodedKinds.length > 0 ? [...encodings] : [],
    truncated: budget.truncated,
  };
}

function scanDecoded(
  text: string,
  depth: number,
  budget: Budget,
  found: Set<string>,
  encodings: Set<Encoding>,
): void {
  const runs: EncodedRun[] = encodedRuns(text);
  const percent = percentDecoded(text);
  if (percent !== undefined) runs.unshift({ encoding: "percent", run: percent });
  for (const { encoding, run } of runs) {
    if (budget.runs <= 0 || budget.bytes <= 0) {
      budget.truncated = true;
      return;
    }
    budget.runs--;
    const plain = encoding === "percent" ? run : decodeRun(run, encoding, budget);
    if (plain === undefined) continue;
    const kinds = secretKinds(plain);
    for (const kind of kinds) found.add(kind);
    if (kinds.length > 0) encodings.add(encoding);
    if (depth < MAX_DECODE_DEPTH) scanDecoded(plain, depth + 1, budget, found, encodings);
  }
}

type Encoding = "base64" | "hex" | "percent";

interface EncodedRun {
  encoding: Encoding;
  run: string;
}

/** `%41%4B…` (a URL's encoding) decoded, when the text has at least 8 escapes; else undefined. */
function percentDecoded(text: string): string | undefined {
  let escapes = 0;
  for (let i = text.indexOf("%"); i !== -1 && escapes < 8; i = text.indexOf("%", i + 1))
    if (isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) escapes++;
  if (escapes < 8) return undefined;
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run; // not UTF-8: left as it was
    }
  });
}

/**
 * Runs of base64 (standard or url alphabet, `=` padding) and of hex, in one linear pass: a
 * regular expression tried from every position costs the length of each word at each of its
 * characters (100 µs on 2 KB of code). A hex run is decoded as hex only (as base64 it is noise).
 */
function encodedRuns(text: string): EncodedRun[] {
  const runs: EncodedRun[] = [];
  let b64Start = 0;
  let hexStart = 0;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 0;
    const hex = isHex(code);
    const hexRunStart = hexStart;
    if (!hex) {
      // Odd lengths too: decodeRun tries both alignments (a trailing half byte is dropped).
      if (i - hexStart >= MIN_HEX_RUN) runs.push({ encoding: "hex", run: text.slice(hexStart, i) });
      hexStart = i + 1;
    }
    if (hex || isBase64(code)) continue;
    let end = i;
    while (end < text.length && end - i < 2 && text.charCodeAt(end) === 61) end++; // `=` padding
    const allHex = hexRunStart <= b64Start;
    if (end - b64Start >= MIN_BASE64_RUN && !allHex)
      runs.push({ encoding: "base64", run: text.slice(b64Start, end) });
    b64Start = i + 1;
  }
  return runs;
}

function isHex(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
}

/** Letters, digits, `+`, `/`, `-`, `_` (hex digits are tested first). */
function isBase64(code: number): boolean {
  return (
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    (code >= 48 && code <= 57) ||
    code === 43 ||
    code === 47 ||
    code === 45 ||
    code === 95
  );
}

/** The run decoded as text, when it is mostly printable (binary is not a typed secret). */
function decodeRun(whole: string, encoding: "base64" | "hex", budget: Budget): string | undefined {
  // A look at the first bytes first: an image or a hash is rejected before it is decoded whole
  // (a 64 KB run of binary then costs microseconds, not its size). Each alignment is probed: a
  // run may start with characters that are not part of the encoding (`x` + base64, `e` + hex).
  const groups = encoding === "hex" ? 2 : 4;
  let run: string | undefined;
  for (let offset = 0; offset < groups && run === undefined; offset++) {
    const probe = whole.slice(offset, offset + PROBE_CHARS);
    if (probe.length >= groups && decodeText(probe, encoding) !== undefined)
      run = whole.slice(offset);
  }
  if (run === undefined) return undefined;
  const size = Math.floor(encoding === "hex" ? run.length / 2 : (run.length * 3) / 4);
  const take = Math.min(size, budget.bytes);
  if (take < size) budget.truncated = true;
  budget.bytes -= take;
  const chars = encoding === "hex" ? take * 2 : Math.ceil((take * 4) / 3);
  return decodeText(run.slice(0, chars), encoding);
}

/** Whole groups only (4 base64 characters, 2 hex ones), so a probe decodes like the run does. */
const PROBE_CHARS = 64;

function decodeText(encoded: string, encoding: "base64" | "hex"): string | undefined {
  const bytes = Buffer.from(encoded, encoding === "hex" ? "hex" : "base64");
  if (bytes.length === 0) return undefined;
  const text = bytes.toString("utf8");
  // Control characters and U+FFFD (bytes that are no UTF-8) mark binary: one pass, no per-char test.
  const binary = text.match(BINARY)?.length ?? 0;
  return binary <= text.length * 0.2 ? text : undefined;
}
