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
    encodings: z.array(z.enum(["base64", "hex"])).describe("Encodings a secret was found under"),
    truncated: z.boolean().describe("A decode bound was reached: part of the text was not decoded"),
  })
  .strict();
export type SecretFact = z.infer<typeof SecretFactSchema>;

const BASE64_RUN = /[A-Za-z0-9+/_-]{20,}={0,2}/g;
const HEX_RUN = /(?:[0-9a-fA-F]{2}){16,}/g;
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
  const encodings = new Set<"base64" | "hex">();
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
  encodings: Set<"base64" | "hex">,
): void {
  for (const [encoding, regex, min] of [
    ["hex", HEX_RUN, MIN_HEX_RUN],
    ["base64", BASE64_RUN, MIN_BASE64_RUN],
  ] as const) {
    for (const match of text.matchAll(regex)) {
      const run = match[0];
      if (run.length < min) continue;
      if (budget.runs <= 0 || budget.bytes <= 0) {
        budget.truncated = true;
        return;
      }
      budget.runs--;
      const plain = decodeRun(run, encoding, budget);
      if (plain === undefined) continue;
      const kinds = secretKinds(plain);
      for (const kind of kinds) found.add(kind);
      if (kinds.length > 0) encodings.add(encoding);
      if (depth < MAX_DECODE_DEPTH) scanDecoded(plain, depth + 1, budget, found, encodings);
    }
  }
}

/** The run decoded as text, when it is mostly printable (binary is not a typed secret). */
function decodeRun(run: string, encoding: "base64" | "hex", budget: Budget): string | undefined {
  const size = encoding === "hex" ? run.length / 2 : Math.floor((run.length * 3) / 4);
  const take = Math.min(size, budget.bytes);
  if (take < size) budget.truncated = true;
  budget.bytes -= take;
  const encoded =
    encoding === "hex" ? run.slice(0, take * 2) : run.slice(0, Math.ceil((take * 4) / 3));
  const bytes = Buffer.from(encoded, encoding === "hex" ? "hex" : "base64");
  if (bytes.length === 0) return undefined;
  const text = bytes.toString("utf8");
  // Control characters and U+FFFD (bytes that are no UTF-8) mark binary: one pass, no per-char test.
  const binary = text.match(BINARY)?.length ?? 0;
  return binary <= text.length * 0.2 ? text : undefined;
}
