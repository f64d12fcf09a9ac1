/**
 * A request's deadline in its body (protocol 2, docs/protocol.md "Deadlines in the body"): a
 * plain JSON call or policy request says `timeoutMs` as its first member and needs no header
 * block at all. A gzip or blob body cannot be read before it is decoded (and a blob's fetch needs
 * the deadline), so it keeps `Hookbus-Timeout-Ms` beside `Hookbus-Encoding`.
 *
 * Readers take the body's `timeoutMs` when the body has one and the header only when it has none
 * (older senders): a sender writes exactly one of the two.
 */
import type { MsgHdrs } from "@nats-io/transport-node";
import { bodyHeaders, optionalBodyHeaders, type EncodedBody } from "./codec.js";
import { Header } from "./headers.js";
import { JsonByte } from "../foundation/limits.js";

/** What goes on the wire for one request: its bytes, and headers only when they say something. */
export interface RequestWire {
  data: Uint8Array;
  headers: MsgHdrs | undefined;
}

/**
 * The request as sent with `timeoutMs` (a whole number of ms): spliced into a plain JSON body,
 * else in the header. `extra` are headers the request needs only when its body cannot be read.
 */
export function withDeadline(
  body: EncodedBody,
  timeoutMs: number,
  extra: Record<string, string> = {},
): RequestWire {
  if (body.encoding !== "json")
    return {
      data: body.data,
      headers: bodyHeaders(body, { ...extra, [Header.TimeoutMs]: String(timeoutMs) }),
    };
  return { data: spliceTimeoutMs(body.data, timeoutMs), headers: optionalBodyHeaders(body) };
}

/**
 * `{"timeoutMs":N,` followed by the body after its `{`: the bytes of a shared body, not a
 * re-stringify of its value (one body serves every policy of a call, each with its own timeout).
 * The body is a JSON object as JSON.stringify writes it (no whitespace) without `timeoutMs`.
 */
export function spliceTimeoutMs(json: Uint8Array, timeoutMs: number): Uint8Array {
  const empty = json.length === 2 && json[1] === JsonByte.CLOSE_BRACE;
  const head = `{"timeoutMs":${Math.max(0, Math.floor(timeoutMs))}${empty ? "" : ","}`;
  const out = Buffer.allocUnsafe(head.length + json.length - 1);
  out.write(head, 0, "latin1");
  out.set(json.subarray(1), head.length);
  return out;
}

/**
 * The body's deadline, read as the header always was: a finite positive number of ms; anything
 * else (`-1`, `0`, a string, `null`) names none. A reader asks for it only when the body has the
 * field, and then does not read the header.
 */
export function bodyTimeoutMs(value: unknown): number | undefined {
  return typeof value === "number" && isDeadline(value) ? value : undefined;
}

/** The header's deadline (older senders, gzip and blob bodies); undefined without headers. */
export function headerTimeoutMs(headers: MsgHdrs | undefined): number | undefined {
  if (headers === undefined) return undefined;
  const asked = Number(headers.get(Header.TimeoutMs) || "");
  return isDeadline(asked) ? asked : undefined;
}

function isDeadline(ms: number): boolean {
  return Number.isFinite(ms) && ms > 0;
}

const TIMEOUT_MEMBER = Buffer.from('{"timeoutMs":', "latin1");
const CALL_ID_MEMBER = Buffer.from('"callId":"', "latin1");
/** The longest call id (envelope.ts, CallRequest) a scan reads. */
const MAX_SCANNED_ID = 256;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/**
 * Where a body's members begin after a leading `{"timeoutMs":N,` as spliceTimeoutMs writes it:
 * the index of the `"` that follows, or 1 (just after the `{`) for a body without that prefix.
 * The rest is what two sends of one request have in common (the deadline left changes).
 */
export function afterTimeoutMs(json: Uint8Array): number {
  if (!startsWith(json, TIMEOUT_MEMBER, 0)) return 1;
  let i = TIMEOUT_MEMBER.length;
  while (i < json.length && json[i]! >= DIGIT_0 && json[i]! <= DIGIT_9) i++;
  return i > TIMEOUT_MEMBER.length && json[i] === JsonByte.COMMA ? i + 1 : 1;
}

/**
 * The call id of a call request whose body begins as the agent SDK writes it
 * (`{"timeoutMs":N,"callId":"…"`, an id without escapes of at most 256 bytes), read from its
 * bytes without parsing them: a body that cannot be parsed (too deep, cut off) is still named in
 * its error record, and a re-sent call joins the one in flight, with no `Hookbus-Call-Id`
 * header. Any other shape: undefined.
 */
export function leadingCallId(json: Uint8Array): string | undefined {
  const start = afterTimeoutMs(json);
  if (start === 1 || !startsWith(json, CALL_ID_MEMBER, start)) return undefined;
  const from = start + CALL_ID_MEMBER.length;
  const until = Math.min(json.length, from + MAX_SCANNED_ID + 1);
  for (let i = from; i < until; i++) {
    const b = json[i]!;
    if (b === JsonByte.BACKSLASH || b < 0x20) return undefined;
    if (b === JsonByte.QUOTE)
      return i === from
        ? undefined
        : Buffer.from(json.buffer, json.byteOffset + from, i - from).toString("utf8");
  }
  return undefined;
}

function startsWith(json: Uint8Array, prefix: Uint8Array, at: number): boolean {
  if (json.length < at + prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (json[at + i] !== prefix[i]) return false;
  return true;
}
