/**
 * A seeded generator of hostile messages for the call, observe and policy-reply paths: the same
 * seed gives the same sequence, so a crash found by `npm run fuzz` is reproduced by its seed and
 * index. Sizes stay under the default 1 MiB max_payload (a bigger message is refused by the
 * server itself, before hookbus sees it).
 */
import { gzipSync } from "node:zlib";
import { encodeToken } from "../../src/bus/tokens.js";

export type FuzzPath = "call" | "observe" | "policy-reply";

export interface FuzzMessage {
  path: FuzzPath;
  /** What kind of hostility, for the report. */
  kind: string;
  /** The agent token of the subject (call/observe); may itself be odd. */
  agentToken: string;
  hook: string;
  data: Uint8Array;
  headers: Record<string, string>;
}

/** mulberry32: small, fast, good enough to spread cases; not for secrets. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8");

function deep(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

function validCall(agentId: string, callId: string, toolName = "read_file") {
  return {
    callId,
    hook: "before_tool_call",
    context: {
      agentId,
      sessionKey: `fuzz-${callId.slice(0, 32)}`,
      runId: "run-1",
      toolName,
      toolCallId: callId,
    },
    event: { toolName, toolCallId: callId, params: { path: "/tmp/x" } },
  };
}

type Case = (
  n: number,
  agentId: string,
) => Omit<FuzzMessage, "path" | "agentToken" | "hook"> & {
  agentToken?: string;
  hook?: string;
};

/** Body cases shared by the call and observe paths. */
const BODY_CASES: Case[] = [
  (n) => ({ kind: "non-json", data: Buffer.from(`not json ${n} {`), headers: {} }),
  (n, a) => {
    const full = json(validCall(a, `c-${n}`));
    return { kind: "truncated", data: full.subarray(0, (n % (full.length - 1)) + 1), headers: {} };
  },
  (n, a) => ({
    kind: "wrong-types",
    data: json({ ...validCall(a, `c-${n}`), callId: n, context: [a], event: "x" }),
    headers: {},
  }),
  (n, a) => ({
    kind: "huge-string",
    data: json({ ...validCall(a, `c-${n}`), event: { toolName: "x".repeat(900_000) } }),
    headers: {},
  }),
  (n, a) => {
    const body = JSON.stringify(validCall(a, `c-${n}`)).replace(
      '"params":{"path":"/tmp/x"}',
      `"params":${deep(20_000 + (n % 1000))}`,
    );
    return { kind: "deep-nesting", data: Buffer.from(body), headers: {} };
  },
  (n, a) => ({
    kind: "proto-keys",
    data: Buffer.from(
      JSON.stringify(validCall(a, `c-${n}`)).replace(
        '"params":{',
        '"params":{"__proto__":{"admin":true,"block":false},"constructor":{"prototype":{"x":1}},',
      ),
    ),
    headers: {},
  }),
  (n, a) => {
    const body = json(validCall(a, `c-${n}\u0000`));
    const bad = Buffer.concat([
      body.subarray(0, 20),
      Buffer.from([0xff, 0xfe, 0xc3]),
      body.subarray(20),
    ]);
    return { kind: "invalid-utf8", data: bad, headers: {} };
  },
  (n, a) => ({
    kind: "control-chars-in-ids",
    data: json(validCall(a, `c-${n}\r\nNats-Msg-Id: x`)),
    headers: {},
  }),
  (n, a) => ({
    kind: "long-ids",
    data: json({
      ...validCall(a, "i".repeat(5000 + n)),
      context: { agentId: a, sessionKey: "s".repeat(3000) },
    }),
    headers: {},
  }),
  (n, a) => ({
    kind: "bad-headers",
    data: json(validCall(a, `c-${n}`)),
    headers: {
      "Hookbus-Timeout-Ms": ["-1", "1e12", "NaN", "0", "99999999999999999999"][n % 5]!,
      "Hookbus-Call-Id": `c-${n}`,
      "Hookbus-Encoding": ["zstd", "", "json ", "blob"][n % 4]!,
    },
  }),
  (n, a) => ({
    kind: "gzip-bomb",
    // 256 MiB of one repeated byte, inside a valid JSON string, compresses to ~250 KB.
    data: gzipSync(
      Buffer.concat([
        Buffer.from(JSON.stringify(validCall(a, `c-${n}`)).slice(0, -2)),
        Buffer.from(',"pad":"'),
        Buffer.alloc(256 * 1024 * 1024, 0x61),
        Buffer.from('"}}'),
      ]),
      { level: 9 },
    ),
    headers: { "Hookbus-Encoding": "gzip" },
  }),
  (n) => ({
    kind: "blob-missing",
    data: json({ blob: "ab".repeat(32), size: 1000, chunks: 1, gzip: false }),
    headers: { "Hookbus-Encoding": "blob", "Hookbus-Call-Id": `c-${n}` },
  }),
  (n) => ({
    kind: "blob-many-chunks",
    data: json({ blob: "cd".repeat(32), size: 2 ** 40, chunks: 1_000_000 + n, gzip: true }),
    headers: { "Hookbus-Encoding": "blob", "Hookbus-Call-Id": `c-${n}` },
  }),
  (n, a) => ({
    kind: "odd-subject-token",
    agentToken: ["=ZZ", "=", "a=2", encodeToken("x".repeat(2000)), "%00", "ünï"][n % 6]!,
    data: json(validCall(a, `c-${n}`)),
    headers: {},
  }),
  (n, a) => ({
    kind: "unknown-hook",
    hook: ["after_everything", "__proto__", "constructor", "before_tool_call.x"][n % 4]!.replace(
      ".",
      "_",
    ),
    data: json({ ...validCall(a, `c-${n}`), hook: "after_everything" }),
    headers: {},
  }),
  (n) => ({
    kind: "identity-claim",
    data: json(validCall("someone-else", `c-${n}`)),
    headers: {},
  }),
];

/** Replies a hostile policy worker sends back to the coordinator. */
const REPLY_CASES: ((n: number) => {
  kind: string;
  data: Uint8Array;
  headers: Record<string, string>;
})[] = [
  (n) => ({ kind: "reply-non-json", data: Buffer.from(`{{{${n}`), headers: {} }),
  () => ({ kind: "reply-wrong-shape", data: json({ verdict: "allow" }), headers: {} }),
  () => ({
    kind: "reply-unknown-field",
    data: json({ policy: "fuzz", verdict: { block: false, admin: true } }),
    headers: {},
  }),
  () => ({
    kind: "reply-deep",
    data: Buffer.from(`{"policy":"fuzz","verdict":{"params":${deep(20_000)}}}`),
    headers: {},
  }),
  () => ({
    kind: "reply-proto",
    data: Buffer.from(
      '{"policy":"fuzz","verdict":{"__proto__":{"block":true},"params":{"__proto__":{"x":1}}}}',
    ),
    headers: {},
  }),
  () => ({
    kind: "reply-gzip-bomb",
    data: gzipSync(
      Buffer.concat([
        Buffer.from('{"policy":"fuzz","verdict":{"blockReason":"'),
        Buffer.alloc(128 * 1024 * 1024, 0x62),
        Buffer.from('"}}'),
      ]),
      { level: 9 },
    ),
    headers: { "Hookbus-Encoding": "gzip" },
  }),
  () => ({
    kind: "reply-error-code-forged",
    data: json({ policy: "fuzz", error: { code: 42, message: ["x"] } }),
    headers: { "Hookbus-Error-Code": "\u0000" },
  }),
  (n) => ({
    kind: "reply-huge-reason",
    data: json({ policy: "fuzz", verdict: { block: true, blockReason: "r".repeat(800_000 + n) } }),
    headers: {},
  }),
];

/** Caches of the expensive bodies (gzip bombs), so a long run does not spend its time gzipping. */
const memo = new Map<string, FuzzMessage | ReturnType<(typeof REPLY_CASES)[number]>>();

export function fuzzMessage(random: () => number, n: number, agentId: string): FuzzMessage {
  const roll = random();
  if (roll < 0.15) {
    const index = Math.floor(random() * REPLY_CASES.length);
    const key = `reply-${index}`;
    const cached = memo.get(key) ?? REPLY_CASES[index]!(n);
    if (index === 5) memo.set(key, cached);
    return {
      path: "policy-reply",
      agentToken: encodeToken(agentId),
      hook: "before_tool_call",
      ...cached,
    };
  }
  const path: FuzzPath = roll < 0.3 ? "observe" : "call";
  const index = Math.floor(random() * BODY_CASES.length);
  const key = `body-${index}`;
  const built = (memo.get(key) as FuzzMessage | undefined) ?? {
    path,
    agentToken: encodeToken(agentId),
    hook: path === "observe" ? "after_tool_call" : "before_tool_call",
    ...BODY_CASES[index]!(n, agentId),
  };
  if (built.kind === "gzip-bomb") memo.set(key, built);
  return {
    ...built,
    path,
    hook: path === "observe" && built.hook === "before_tool_call" ? "after_tool_call" : built.hook,
  };
}
