/**
 * Every input has a limit (docs/limits.md). One place for their defaults, their environment
 * variables and the checks that need no I/O: ids (length and characters), JSON nesting depth
 * (scanned iteratively over the bytes, before anything recursive runs), call timeouts, and a
 * bounded per-agent token bucket. Body sizes, inflation and blob chunks are checked by the codec
 * (src/bus/codec.ts) with the same numbers.
 */
import { HookbusError } from "./errors.js";

export interface Limits {
  /** UTF-8 bytes of an id that becomes a subject token (agentId, sessionKey). */
  maxTokenIdBytes: number;
  /** UTF-8 bytes of any other id (callId, eventId, runId, toolCallId). */
  maxIdBytes: number;
  /** Bytes of a message body as it arrives (JSON, gzip or a blob reference). */
  maxEncodedBytes: number;
  /** Bytes of a body once inflated (gzip) or reassembled (blob): the gzip decoder stops here. */
  maxInflatedBytes: number;
  /** Nesting depth of a body's JSON (objects and arrays), envelope included. */
  maxDepth: number;
  /** Chunks one blob reference may name. */
  maxBlobChunks: number;
  /** The longest deadline a caller may ask for; `Hookbus-Timeout-Ms` is capped to it. */
  maxCallTimeoutMs: number;
  /** Calls and observations per second per agent (token bucket); 0 turns it off (the default). */
  ratePerAgent: number;
  /** Bucket size of the per-agent rate limit: the burst an idle agent may send at once. */
  rateBurst: number;
  /** How many agents' buckets are kept; the least recently seen is forgotten first. */
  rateAgentsTracked: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  // 128 bytes become at most 384 token characters: two of them keep an audit subject far
  // below nats-server's 4 KiB control line.
  maxTokenIdBytes: 128,
  maxIdBytes: 256,
  maxEncodedBytes: 1024 * 1024,
  maxInflatedBytes: 16 * 1024 * 1024,
  maxDepth: 64,
  maxBlobChunks: 64,
  maxCallTimeoutMs: 60_000,
  ratePerAgent: 0,
  rateBurst: 100,
  rateAgentsTracked: 10_000,
});

/** Environment variable of each limit (read by `limitsFromEnv`, so by every CLI service). */
export const LIMIT_ENV: Readonly<Record<keyof Limits, string>> = Object.freeze({
  maxTokenIdBytes: "HOOKBUS_MAX_TOKEN_ID_BYTES",
  maxIdBytes: "HOOKBUS_MAX_ID_BYTES",
  maxEncodedBytes: "HOOKBUS_MAX_ENCODED_BYTES",
  maxInflatedBytes: "HOOKBUS_MAX_INFLATED_BYTES",
  maxDepth: "HOOKBUS_MAX_DEPTH",
  maxBlobChunks: "HOOKBUS_MAX_BLOB_CHUNKS",
  maxCallTimeoutMs: "HOOKBUS_MAX_CALL_TIMEOUT_MS",
  ratePerAgent: "HOOKBUS_RATE_PER_AGENT",
  rateBurst: "HOOKBUS_RATE_BURST",
  rateAgentsTracked: "HOOKBUS_RATE_AGENTS_TRACKED",
});

/**
 * The deepest nesting that may be configured: hashing (canonical JSON), redaction and diffing
 * recurse once or twice per level, which stays far inside Node's stack at this depth.
 */
export const MAX_CONFIGURABLE_DEPTH = 1024;

/** Defaults, overridden by the environment, overridden by explicit options; each checked. */
export function resolveLimits(
  options: Partial<Limits> = {},
  env: NodeJS.ProcessEnv = process.env,
): Limits {
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const raw = env[LIMIT_ENV[key]];
    const value = options[key] ?? (raw === undefined || raw === "" ? undefined : Number(raw));
    if (value === undefined) continue;
    const minimum = key === "ratePerAgent" ? 0 : 1;
    const maximum = key === "maxDepth" ? MAX_CONFIGURABLE_DEPTH : Number.MAX_SAFE_INTEGER;
    if (!Number.isFinite(value) || value < minimum || value > maximum) {
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `limit ${key} (${LIMIT_ENV[key]}) must be a number in [${minimum}, ${maximum}], got ${String(options[key] ?? raw)}`,
        { argument: key },
      );
    }
    limits[key] = value;
  }
  return limits;
}

export function limitExceeded(
  limit: string,
  message: string,
  details: Record<string, unknown> = {},
): HookbusError {
  return new HookbusError("HOOKBUS_LIMIT_EXCEEDED", message, { limit, ...details });
}

// C0 and C1 controls and DEL, plus the Unicode line and paragraph separators: none may appear
// in an id (they break headers, log lines and subjects).
// (\p{Cs} matches only lone surrogates in a `u` regex: pairs are read as one code point.)
const CONTROL = /[\p{Cc}\p{Cs}\u2028\u2029]/u;

/**
 * An id the coordinator accepts: a non-empty string of at most `maxBytes` UTF-8 bytes without
 * control characters or lone surrogates. Throws HOOKBUS_LIMIT_EXCEEDED naming the field.
 */
export function checkIdLimit(field: string, value: unknown, maxBytes: number): void {
  if (value === undefined) return;
  if (typeof value !== "string" || value.length === 0) {
    throw limitExceeded("id", `${field} must be a non-empty string`, { field });
  }
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > maxBytes) {
    throw limitExceeded("id", `${field} is ${bytes} bytes long; at most ${maxBytes} are allowed`, {
      field,
      bytes,
      max: maxBytes,
    });
  }
  if (CONTROL.test(value)) {
    throw limitExceeded("id", `${field} contains a control character or a lone surrogate`, {
      field,
    });
  }
}

/** The ids of a call or observation: its own id, and the context's. */
export function checkCallIds(
  limits: Limits,
  ids: { callId?: unknown; eventId?: unknown; context?: Record<string, unknown> | undefined },
): void {
  checkIdLimit("callId", ids.callId, limits.maxIdBytes);
  checkIdLimit("eventId", ids.eventId, limits.maxIdBytes);
  const context = ids.context ?? {};
  checkIdLimit("agentId", context.agentId, limits.maxTokenIdBytes);
  checkIdLimit("sessionKey", context.sessionKey, limits.maxTokenIdBytes);
  checkIdLimit("runId", context.runId, limits.maxIdBytes);
  checkIdLimit("toolCallId", context.toolCallId, limits.maxIdBytes);
}

/** The bytes that shape JSON text, for the byte scanners (here and src/indexer/record-scan.ts). */
export const JsonByte = {
  QUOTE: 0x22,
  BACKSLASH: 0x5c,
  OPEN_BRACE: 0x7b,
  CLOSE_BRACE: 0x7d,
  OPEN_BRACKET: 0x5b,
  CLOSE_BRACKET: 0x5d,
  COLON: 0x3a,
  COMMA: 0x2c,
  LETTER_U: 0x75,
} as const;
const { OPEN_BRACE, OPEN_BRACKET, CLOSE_BRACE, CLOSE_BRACKET, QUOTE, BACKSLASH, COLON } = JsonByte;

/**
 * The nesting depth of JSON text, found by one loop over its bytes (strings skipped), so a
 * hostile 100,000-deep body is refused before JSON.parse, hashing, redaction or diffing (all of
 * which may recurse) ever see it. Malformed text is left to the parser.
 *
 * Two things keep it cheap on the decision path, where it runs before every parse: text with no
 * more bytes than the limit cannot nest deeper than it (a verdict is about 30 bytes), and a
 * string is skipped by a loop of its own that looks for nothing but its end (most bytes of a body
 * are inside strings): about half the time of one loop testing every byte for every case.
 */
export function jsonDepthExceeds(bytes: Uint8Array, maxDepth: number): boolean {
  return bytes.length > maxDepth && jsonMembers(bytes, maxDepth) < 0;
}

/**
 * The depth scan, counting on its way the members of every object (a colon outside a string
 * separates a key from its value, and only that, in JSON): the count, or -1 when the text nests
 * deeper than `maxDepth`. The count lets the codec see a key twice (foundation/json-keys.ts);
 * malformed text gets some count, and the parser refuses it.
 */
export function jsonMembers(bytes: Uint8Array, maxDepth: number): number {
  const length = bytes.length;
  let depth = 0;
  let members = 0;
  for (let i = 0; i < length; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) {
      // To the closing quote, past escapes. Written here, not as a helper: as a call, the scan
      // took twice as long (bench/body-parse.ts).
      for (i++; i < length; i++) {
        const c = bytes[i]!;
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) break;
      }
    } else if (b === COLON) members++;
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > maxDepth) return -1;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--;
  }
  return members;
}

/**
 * The deadline a caller asked for, defaulted and capped. `askedMs` is what its request said (the
 * body's `timeoutMs` or the `Hookbus-Timeout-Ms` header, read by bus/body-deadline.ts): a finite
 * positive number, or undefined when it named none.
 */
export function callTimeoutMs(
  askedMs: number | undefined,
  fallbackMs: number,
  maxMs: number,
): number {
  return Math.min(askedMs ?? fallbackMs, maxMs);
}

/**
 * A token bucket per agent, in a map bounded by `rateAgentsTracked` (the least recently seen
 * agent is forgotten first, which can only make a forgotten agent's bucket full again).
 */
export class AgentRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limits: Pick<Limits, "ratePerAgent" | "rateBurst" | "rateAgentsTracked">,
    private readonly now: () => number = Date.now,
  ) {}

  /** Take one token for `agent`; false when its bucket is empty (the call is refused). */
  take(agent: string): boolean {
    const { ratePerAgent, rateBurst, rateAgentsTracked } = this.limits;
    if (ratePerAgent <= 0) return true;
    const now = this.now();
    const bucket = this.buckets.get(agent) ?? { tokens: rateBurst, at: now };
    bucket.tokens = Math.min(rateBurst, bucket.tokens + ((now - bucket.at) / 1000) * ratePerAgent);
    bucket.at = now;
    // Re-inserted so the map's order is least recently seen first.
    this.buckets.delete(agent);
    this.buckets.set(agent, bucket);
    while (this.buckets.size > rateAgentsTracked) {
      const oldest = this.buckets.keys().next().value;
      if (oldest === undefined) break;
      this.buckets.delete(oldest);
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  get size(): number {
    return this.buckets.size;
  }
}
