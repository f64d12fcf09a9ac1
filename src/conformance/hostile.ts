/**
 * The fuzz categories (test/fuzz/generator.ts) as a worker meets them: each hostile request gets
 * exactly one reply, strict JSON in UTF-8 (what `JSON.parse` reads: no NaN, no Infinity) with a
 * coded error, or a verdict where the request is odd but valid. Identity claims are left out: the
 * coordinator checks identity, a worker never sees a call it refused.
 */
import { gzipSync } from "node:zlib";
import type { Case } from "./cases.js";
import { equal, fail, single } from "./expect.js";
import type { Reply } from "./probe.js";
import { action, context, request, SAMPLE_EVENTS } from "./samples.js";

const TIMEOUT_MS = 2000;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

type Raw = { data: Uint8Array; encoding?: string; headers?: Record<string, string> };

interface Expected {
  /** Error codes that are a right answer. */
  codes: string[];
  /** Whether a verdict (or none) is a right answer too, and what it must be. */
  verdict?: (verdict: unknown) => void;
}

/** One reply, plain JSON that a strict reader accepts, with an expected code or verdict. */
function expectAnswer(replies: readonly Reply[], policy: string, expected: Expected): void {
  const reply = single(replies, policy);
  const only = replies.find((r) => r.status === undefined)!;
  if (only.encoding === undefined && only.data !== undefined) {
    try {
      strictUtf8.decode(only.data);
    } catch {
      fail("the reply is not valid UTF-8");
    }
  }
  const wanted = [...expected.codes, ...(expected.verdict === undefined ? [] : ["a verdict"])];
  if (reply.error !== undefined) {
    if (!expected.codes.includes(reply.error.code))
      fail(`expected ${wanted.join(" or ")}, got ${reply.error.code}: ${reply.error.message}`);
    return;
  }
  if (expected.verdict === undefined)
    fail(
      `expected error ${expected.codes.join(" or ")}, got verdict ${JSON.stringify(reply.verdict)}`,
    );
  expected.verdict(reply.verdict ?? undefined);
}

/** `timeoutMs`: the request's `Hookbus-Timeout-Ms` (undefined: none, the body says it or not). */
function hostile(
  name: string,
  raw: () => Raw,
  expected: Expected,
  hook = "before_tool_call",
  timeoutMs: number | undefined = TIMEOUT_MS,
): Case {
  return {
    name: `hostile: ${name}`,
    async run({ probe }) {
      const replies = await probe.ask(
        timeoutMs === undefined ? { hook, raw: raw() } : { hook, raw: raw(), timeoutMs },
      );
      expectAnswer(replies, probe.policy, expected);
    },
  };
}

const text = (value: string) => Buffer.from(value, "utf8");
const json = (value: unknown) => text(JSON.stringify(value));
const readFile = () => action("read_file", { path: "/tmp/x" });
/** A request whose params are `params` as JSON text, spelt by hand (what JSON.stringify cannot). */
const withParams = (tool: string, params: string) =>
  text(JSON.stringify(action(tool, {})).replace('"params":{}', `"params":${params}`));
const noOpinion = (verdict: unknown) => equal(verdict, undefined, "verdict");
const BAD = { codes: ["HOOKBUS_BAD_MESSAGE"] };

const bodyCases: Case[] = [
  hostile("not JSON", () => ({ data: text("not json {") }), BAD),
  hostile("truncated", () => ({ data: json(readFile()).subarray(0, 40) }), BAD),
  hostile(
    "wrong types",
    () => ({ data: json({ ...readFile(), callId: 7, context: ["a"], event: "x" }) }),
    BAD,
  ),
  hostile(
    "a 900 KB string",
    () => ({ data: json(request("before_tool_call", { toolName: "x".repeat(900_000) })) }),
    {
      codes: ["HOOKBUS_INVALID_EVENT", "HOOKBUS_LIMIT_EXCEEDED"],
    },
  ),
  hostile(
    "nesting 20,000 deep",
    () => ({ data: withParams("read_file", "[".repeat(20_000) + "]".repeat(20_000)) }),
    { codes: ["HOOKBUS_LIMIT_EXCEEDED"] },
  ),
  hostile(
    "__proto__ and constructor keys are data",
    () => ({
      data: withParams(
        "conformance_verdict",
        '{"verdict":{"params":{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}}}',
      ),
    }),
    {
      codes: [],
      verdict: (verdict) =>
        equal(
          JSON.stringify(verdict),
          '{"params":{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}}',
          "verdict",
        ),
    },
  ),
  hostile(
    "invalid UTF-8 in a string",
    () => {
      const [head, tail] = JSON.stringify(readFile()).split("/tmp/x");
      return { data: Buffer.concat([text(head!), Buffer.from([0xff, 0xfe, 0xc3]), text(tail!)]) };
    },
    // The TypeScript SDK reads it as U+FFFD (as TextDecoder does); refusing it is right too.
    { codes: ["HOOKBUS_BAD_MESSAGE"], verdict: noOpinion },
  ),
  hostile(
    "control characters in ids",
    () => ({ data: json({ ...readFile(), callId: "c\r\nNats-Msg-Id: x\u0000" }) }),
    { codes: ["HOOKBUS_BAD_MESSAGE", "HOOKBUS_LIMIT_EXCEEDED"], verdict: noOpinion },
  ),
  hostile(
    "ids of thousands of bytes",
    () => ({
      data: json({
        ...action("read_file", {}, { ...context(), sessionKey: "s".repeat(3000) }),
        callId: "i".repeat(5000),
      }),
    }),
    {
      codes: ["HOOKBUS_INVALID_CONTEXT", "HOOKBUS_LIMIT_EXCEEDED", "HOOKBUS_BAD_MESSAGE"],
      verdict: noOpinion,
    },
  ),
];

const numberCases: Case[] = [
  ...["NaN", "Infinity", "-Infinity"].map((word) =>
    hostile(
      `${word} in a request`,
      () => ({ data: withParams("read_file", `{"n":${word}}`) }),
      BAD,
    ),
  ),
  hostile(
    "1e999 in a request is refused or read as JavaScript reads it, never echoed as Infinity",
    () => ({ data: withParams("conformance_verdict", '{"verdict":{"params":{"n":1e999}}}') }),
    // JSON.parse makes it Infinity, JSON.stringify writes that as null.
    {
      codes: ["HOOKBUS_BAD_MESSAGE"],
      verdict: (v) => equal(v, { params: { n: null } }, "verdict"),
    },
  ),
  hostile(
    "a lone surrogate is text like any other, echoed as an escape",
    () => ({ data: withParams("conformance_verdict", '{"verdict":{"params":{"s":"a\\ud800b"}}}') }),
    { codes: [], verdict: (v) => equal(v, { params: { s: "a\ud800b" } }, "verdict") },
  ),
];

const headerCases: Case[] = [
  ...["-1", "0", "NaN", "Infinity", "1e12", "99999999999999999999", "soon"].map((value) =>
    hostile(
      `Hookbus-Timeout-Ms: ${value} (no deadline, or a far one)`,
      () => ({ data: json(readFile()), headers: { "Hookbus-Timeout-Ms": value } }),
      { codes: [], verdict: noOpinion },
    ),
  ),
  ...["zstd", "GZIP", "blob"].map((encoding) =>
    hostile(
      `Hookbus-Encoding: ${JSON.stringify(encoding)} on a plain JSON request`,
      () => ({ data: json(readFile()), encoding }),
      // A blob reference is read with a nesting limit of 2: a request is deeper.
      { codes: ["HOOKBUS_BAD_MESSAGE", "HOOKBUS_LIMIT_EXCEEDED"] },
    ),
  ),
  hostile(
    'Hookbus-Encoding: "json " (clients trim header values)',
    () => ({ data: json(readFile()), encoding: "json " }),
    { ...BAD, verdict: noOpinion },
  ),
];

/** A request whose body's deadline is `value` (JSON text), as protocol 2 writes it: first. */
const withTimeoutMs = (value: string) =>
  text(`{"timeoutMs":${value},${JSON.stringify(readFile()).slice(1)}`);

/**
 * The body's deadline is read as the header is: a number that is not a finite positive one names
 * no deadline (a far one still leaves time to answer). A value that is not a number at all is
 * against the schema: reading it as no deadline or refusing the request are both right.
 */
const bodyDeadlineCases: Case[] = [
  ...["-1", "0", "1500.5", "1e12", "99999999999999999999"].map((value) =>
    hostile(
      `timeoutMs ${value} in the body (no deadline, or a far one)`,
      () => ({ data: withTimeoutMs(value) }),
      { codes: [], verdict: noOpinion },
      "before_tool_call",
      undefined,
    ),
  ),
  ...["1e999", '"soon"', '"2000"', "null", "true", "[300]"].map((value) =>
    hostile(
      `timeoutMs ${value} in the body (no deadline, or refused)`,
      () => ({ data: withTimeoutMs(value) }),
      { ...BAD, verdict: noOpinion },
      "before_tool_call",
      undefined,
    ),
  ),
];

const encodedCases: Case[] = [
  hostile(
    "a gzip bomb inside a JSON string",
    () => ({
      data: gzipSync(
        Buffer.concat([
          text(JSON.stringify(readFile()).slice(0, -2)),
          text(',"pad":"'),
          Buffer.alloc(32 * 1024 * 1024, 0x61),
          text('"}}'),
        ]),
        { level: 9 },
      ),
      encoding: "gzip",
    }),
    { codes: ["HOOKBUS_LIMIT_EXCEEDED"] },
  ),
  hostile(
    "a blob that was never stored",
    () => ({
      data: json({ blob: "ab".repeat(32), size: 1000, chunks: 1, gzip: false, owner: "x" }),
      encoding: "blob",
    }),
    { codes: ["HOOKBUS_BLOB_MISSING"] },
  ),
  ...[
    { blob: "ab".repeat(32), size: 1000, chunks: 1, gzip: false },
    { blob: "cd".repeat(32), size: 2 ** 40, chunks: 1_000_000, gzip: true },
    { blob: "../../etc", size: 1, chunks: 1, gzip: false, owner: "x" },
    { blob: "ab".repeat(32), size: 1, chunks: 1, gzip: false, owner: "x.>" },
  ].map((ref, i) =>
    hostile(`not a blob reference (${i + 1})`, () => ({ data: json(ref), encoding: "blob" }), BAD),
  ),
];

const subjectCases: Case[] = [
  ...["=ZZ", "=", "a=2", "%00"].map((token) =>
    hostile(
      `subject hook token ${JSON.stringify(token)}`,
      () => ({ data: json(readFile()) }),
      BAD,
      token,
    ),
  ),
  ...["after_everything", "__proto__", "constructor", "toString"].map((hook) =>
    hostile(
      `unknown hook ${hook}`,
      () => ({ data: json(request(hook, SAMPLE_EVENTS.before_tool_call)) }),
      { codes: ["HOOKBUS_UNKNOWN_HOOK"] },
      hook,
    ),
  ),
];

export const HOSTILE_CASES: Case[] = [
  ...bodyCases,
  ...numberCases,
  ...headerCases,
  ...bodyDeadlineCases,
  ...encodedCases,
  ...subjectCases,
];
