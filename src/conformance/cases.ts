/**
 * The protocol's cases, in the order they run. Each drives the worker under test through the
 * private setup and throws a CaseFailure naming the first difference. Cases that stop or restart
 * processes come last, and each leaves one serving instance behind.
 */
import { createHash, randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { MODIFYING_HOOK_NAMES } from "../catalog/catalog.js";
import { equal, errorCode, eventually, fail, verdictOf } from "./expect.js";
import { action, context, request, SAMPLE_EVENTS } from "./samples.js";
import type { Setup } from "./setup.js";
import { callFacts, loadCallFacts } from "../policy/call-facts.js";

export interface Case {
  name: string;
  run(setup: Setup): Promise<void>;
}

const TIMEOUT_MS = 2000;

/** Waits until the worker answers (after a start, a restart, a reconnect). */
export async function answering(setup: Setup, ms: number): Promise<void> {
  await eventually(
    async () => {
      const replies = await setup.probe.ask({
        hook: "before_tool_call",
        body: action("conformance_digest", { text: "ping" }),
        timeoutMs: 1000,
        windowMs: 1000,
        stopAfter: 1,
      });
      return replies.some((r) => r.status === undefined) ? true : undefined;
    },
    ms,
    "the worker did not answer",
  );
}

const eventCases: Case[] = MODIFYING_HOOK_NAMES.map((hook) => ({
  name: `event: ${hook}`,
  async run({ probe }) {
    const body = request(hook, SAMPLE_EVENTS[hook]);
    verdictOf(await probe.ask({ hook, body, timeoutMs: TIMEOUT_MS }), probe.policy, hook);
  },
}));

const VERDICT_SHAPES: Record<string, unknown> = {
  "no change": {},
  block: { block: true, blockReason: "conformance says no" },
  "block false": { block: false },
  "replace params": { params: { path: "/tmp/safe" } },
  "require approval": { requireApproval: { title: "check this", severity: "high" } },
};

const verdictCases: Case[] = [
  ...Object.entries(VERDICT_SHAPES).map(([shape, verdict]): Case => ({
    name: `verdict: ${shape}`,
    async run({ probe }) {
      const body = action("conformance_verdict", { verdict });
      const got = verdictOf(
        await probe.ask({ hook: "before_tool_call", body, timeoutMs: TIMEOUT_MS }),
        probe.policy,
        "before_tool_call",
      );
      equal(got, verdict, "verdict");
    },
  })),
  {
    name: "verdict: none is no opinion",
    async run({ probe }) {
      const body = action("conformance_other", {});
      const got = verdictOf(
        await probe.ask({ hook: "before_tool_call", body, timeoutMs: TIMEOUT_MS }),
        probe.policy,
        "before_tool_call",
      );
      equal(got, undefined, "verdict");
    },
  },
  ...[{ block: "yes" }, { params: { a: 1 }, extra: true }].map((verdict): Case => ({
    name: `verdict: invalid ${JSON.stringify(verdict)} is HOOKBUS_INVALID_VERDICT`,
    async run({ probe }) {
      const body = action("conformance_verdict", { verdict });
      const replies = await probe.ask({ hook: "before_tool_call", body, timeoutMs: TIMEOUT_MS });
      errorCode(replies, probe.policy, ["HOOKBUS_INVALID_VERDICT"]);
    },
  })),
  {
    name: "handler failure is HOOKBUS_POLICY_ERROR",
    async run({ probe }) {
      const body = action("conformance_fail", { message: "asked to" });
      const replies = await probe.ask({ hook: "before_tool_call", body, timeoutMs: TIMEOUT_MS });
      errorCode(replies, probe.policy, ["HOOKBUS_POLICY_ERROR"]);
    },
  },
];

async function digestCase(setup: Setup, text: string, expectEncoding: string): Promise<void> {
  const { probe, bus } = setup;
  const body = action("conformance_digest", { text });
  const encoded = await bus.codec.encode(body);
  if (encoded.encoding !== expectEncoding) fail(`kit sent ${encoded.encoding}`);
  const got = verdictOf(
    await probe.ask({ hook: "before_tool_call", body, timeoutMs: 10_000 }),
    probe.policy,
    "before_tool_call",
  );
  const bytes = Buffer.from(text, "utf8");
  equal(
    got,
    { params: { sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length } },
    "digest of the body the worker read",
  );
}

/**
 * The policy request's `facts` (docs/facts.md) reach the handler as sent: the conformance policy
 * echoes what its SDK handed it, and a worker that drops, re-parses or reshapes them fails; a
 * request without them (a policy that did not declare `facts: true`) hands the handler none.
 */
const factsCases: Case[] = [
  {
    name: "facts: the request's facts reach the handler as sent",
    async run({ probe }) {
      await loadCallFacts();
      const body = action("conformance_facts", { command: "sudo rm -rvf /" });
      const facts = callFacts(
        "before_tool_call",
        body.event as Record<string, unknown>,
        body.context as Record<string, unknown>,
      );
      if (facts.tools[0]?.shell?.[0]?.deletesRecursively !== true)
        fail("the kit's own facts do not describe `rm -rvf /`");
      body.facts = facts;
      const got = verdictOf(
        await probe.ask({ hook: "before_tool_call", body, timeoutMs: TIMEOUT_MS }),
        probe.policy,
        "before_tool_call",
      );
      equal(got, { params: { facts } }, "the facts the handler read");
    },
  },
  {
    // Since issue 35 a coordinator sends facts only to a policy that declares `facts: true`.
    name: "facts: a request without facts gives the handler none",
    async run({ probe }) {
      const body = action("conformance_facts", { command: "sudo rm -rvf /" });
      const got = verdictOf(
        await probe.ask({ hook: "before_tool_call", body, timeoutMs: TIMEOUT_MS }),
        probe.policy,
        "before_tool_call",
      );
      equal(got, { params: { facts: null } }, "the facts the handler read (none)");
    },
  },
];

const bodyCases: Case[] = [
  {
    name: "large body: gzip",
    run: (setup) => digestCase(setup, "the quick brown fox ü ".repeat(20_000), "gzip"),
  },
  {
    name: "large body: blob reference",
    // Incompressible: 3 MB of random base64 does not fit one message even gzipped.
    run: (setup) => digestCase(setup, randomBytes(2_400_000).toString("base64"), "blob"),
  },
];

function rawCase(
  name: string,
  codes: string[],
  raw: () => { data: Uint8Array; encoding?: string },
  hook = "before_tool_call",
): Case {
  return {
    name,
    async run({ probe }) {
      const replies = await probe.ask({ hook, raw: raw(), timeoutMs: TIMEOUT_MS });
      errorCode(replies, probe.policy, codes);
    },
  };
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8");
const nested = (depth: number): unknown => {
  let value: unknown = { toolName: "x", params: {} };
  for (let i = 0; i < depth; i++) value = { v: value };
  return value;
};

const malformedCases: Case[] = [
  rawCase("malformed: not JSON", ["HOOKBUS_BAD_MESSAGE"], () => ({ data: json("x").subarray(1) })),
  rawCase("malformed: not a PolicyRequest", ["HOOKBUS_BAD_MESSAGE"], () => ({
    data: json({ hello: "world" }),
  })),
  rawCase("malformed: bad gzip", ["HOOKBUS_BAD_MESSAGE"], () => ({
    data: Buffer.from("not gzip"),
    encoding: "gzip",
  })),
  rawCase("malformed: hook differs from the subject", ["HOOKBUS_BAD_MESSAGE"], () => ({
    data: json(request("before_llm_call", SAMPLE_EVENTS.before_llm_call)),
  })),
  rawCase("malformed: invalid event", ["HOOKBUS_INVALID_EVENT"], () => ({
    data: json(request("before_tool_call", { params: {} })),
  })),
  rawCase("malformed: invalid context", ["HOOKBUS_INVALID_CONTEXT"], () => ({
    data: json(request("before_tool_call", SAMPLE_EVENTS.before_tool_call, { agentId: "a" })),
  })),
  rawCase(
    "malformed: observational hook asked",
    ["HOOKBUS_NOT_MODIFYING_HOOK"],
    () => ({
      data: json(request("after_tool_call", { toolName: "x", params: {} })),
    }),
    "after_tool_call",
  ),
  rawCase("oversized: nesting deeper than 64", ["HOOKBUS_LIMIT_EXCEEDED"], () => ({
    data: json(request("before_tool_call", nested(80))),
  })),
  rawCase("oversized: gzip inflating past 16 MiB", ["HOOKBUS_LIMIT_EXCEEDED"], () => ({
    data: gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20)),
    encoding: "gzip",
  })),
  rawCase("oversized: blob of more than 64 chunks", ["HOOKBUS_LIMIT_EXCEEDED"], () => ({
    data: json({ blob: "0".repeat(64), size: 100, chunks: 1000, gzip: true, owner: "x" }),
    encoding: "blob",
  })),
];

/** The deadline where a coordinator of protocol 2 writes it, and where an older one did. */
const DEADLINE_WAYS = [
  { deadlineIn: "body", named: "in the body" },
  { deadlineIn: "header", named: "in Hookbus-Timeout-Ms" },
] as const;

const deadlineCases: Case[] = DEADLINE_WAYS.flatMap(({ deadlineIn, named }): Case[] => [
  {
    name: `deadline ${named}: no answer after it (handler aborted)`,
    async run({ probe }) {
      const body = action("conformance_sleep", { ms: 1500 });
      const replies = await probe.ask({
        hook: "before_tool_call",
        body,
        timeoutMs: 300,
        deadlineIn,
        windowMs: 2000,
      });
      const answers = replies.filter((r) => r.status === undefined);
      if (answers.length > 0)
        fail(`answered ${Math.round(answers[0]!.atMs - 300)} ms after a 300 ms deadline`);
    },
  },
  {
    name: `deadline ${named}: requests expired while queued are dropped`,
    async run(setup) {
      const { probe } = setup;
      const asks = Array.from({ length: 200 }, () =>
        probe.ask({
          hook: "before_tool_call",
          body: action("conformance_sleep", { ms: 400 }),
          timeoutMs: 300,
          deadlineIn,
          windowMs: 1500,
        }),
      );
      const answered = (await Promise.all(asks)).filter((r) =>
        r.some((reply) => reply.status === undefined),
      ).length;
      if (answered > 0) fail(`${answered} of 200 expired requests were answered`);
      const started = performance.now();
      await answering(setup, 2000);
      const ms = performance.now() - started;
      if (ms > 2000) fail(`took ${Math.round(ms)} ms to answer after the burst`);
    },
  },
]);

const stateCases: Case[] = [
  {
    name: "session state on JetStream KV",
    async run({ probe, readState }) {
      const ctx = context();
      const counts: unknown[] = [];
      for (let i = 0; i < 2; i++) {
        const got = verdictOf(
          await probe.ask({
            hook: "before_tool_call",
            body: action("conformance_count", {}, ctx),
            timeoutMs: TIMEOUT_MS,
          }),
          probe.policy,
          "before_tool_call",
        );
        counts.push(got);
      }
      equal(counts, [{ params: { count: 1 } }, { params: { count: 2 } }], "counts");
      equal(await readState(ctx.sessionKey, "count"), 2, "stored count");
    },
  },
  {
    name: "end to end: a call through the coordinator",
    async run({ client }) {
      const decision = await client.decide("before_tool_call", context(), {
        toolName: "conformance_verdict",
        params: { verdict: { block: true, blockReason: "e2e" } },
      });
      equal(
        { outcome: decision.outcome, blockReason: decision.blockReason },
        { outcome: "block", blockReason: "e2e" },
        "decision",
      );
    },
  },
];

export const BASIC_CASES: Case[] = [
  ...eventCases,
  ...verdictCases,
  ...factsCases,
  ...bodyCases,
  ...malformedCases,
  ...deadlineCases,
  ...stateCases,
];
