/**
 * The audit query API on a real log: every filter returns exactly the expected records, the
 * server-side filters are applied by the server (the reader receives only what matches), empty
 * results and bad filters come back at once, limit/since/until bound the read, and a session's
 * timeline says who decided what, in order.
 */
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  queryLog,
  sessionTimeline,
  type AuditFilter,
  type DecisionStep,
  type LateStep,
} from "../../../src/audit/index.js";
import { Bus, isHookbusError } from "../../../src/index.js";
import { uniqueNamespace, useNatsServer } from "../pipeline/harness.js";
import {
  buildAuditLog,
  collect,
  EXPECTED,
  expectedLabels,
  label,
  labels,
  NIGHT,
  OPS,
  OTHER,
  SLOTH_TIMEOUT_MS,
  SUPPORT,
  type AuditLog,
} from "./fixture.js";

const nats = useNatsServer();

let log: AuditLog;
beforeAll(async () => {
  log = await buildAuditLog(nats.url());
}, 60_000);
afterAll(async () => {
  await log?.close();
});

const query = (filter: AuditFilter) => collect(queryLog(log.bus, filter));

describe("queryLog filters", () => {
  const cases: [string, AuditFilter, (r: (typeof EXPECTED)[number]) => boolean][] = [
    ["no filter", {}, () => true],
    ["agent", { agentId: SUPPORT }, (r) => r.agentId === SUPPORT],
    ["agent with a dot (encoded token)", { agentId: OPS }, (r) => r.agentId === OPS],
    ["session", { sessionKey: "conv-1" }, (r) => r.sessionKey === "conv-1"],
    ["session with a space", { sessionKey: NIGHT }, (r) => r.sessionKey === NIGHT],
    [
      "agent and session",
      { agentId: SUPPORT, sessionKey: "conv-1" },
      (r) => r.agentId === SUPPORT && r.sessionKey === "conv-1",
    ],
    ["hook", { hook: "before_tool_call" }, (r) => r.hook === "before_tool_call"],
    ["observational hook", { hook: "after_tool_call" }, (r) => r.hook === "after_tool_call"],
    ["outcome allow", { outcome: "allow" }, (r) => r.kind === "allow"],
    ["outcome block", { outcome: "block" }, (r) => r.kind === "block"],
    ["outcome modify", { outcome: "modify" }, (r) => r.kind === "modify"],
    ["outcome reply", { outcome: "reply" }, (r) => r.kind === "reply"],
    ["outcome error (error records)", { outcome: "error" }, (r) => r.kind === "error"],
    ["outcome late (late verdicts)", { outcome: "late" }, (r) => r.kind === "late"],
    ["outcome observed (observations)", { outcome: "observed" }, (r) => r.kind === "observed"],
    [
      "hook and outcome",
      { hook: "before_tool_call", outcome: "block" },
      (r) => r.hook === "before_tool_call" && r.kind === "block",
    ],
    ["policy no-shell", { policy: "no-shell" }, (r) => r.policies.includes("no-shell")],
    [
      "policy sloth (its decisions and its late verdict)",
      { policy: "sloth" },
      (r) => r.policies.includes("sloth"),
    ],
    ["policy in shadow mode", { policy: "candidate" }, (r) => r.policies.includes("candidate")],
    ["policy never asked", { policy: "nobody" }, () => false],
    ["shadow changed", { shadowChanged: true }, (r) => r.shadowChanged],
    [
      "agent and shadow changed",
      { agentId: OPS, shadowChanged: true },
      (r) => r.agentId === OPS && r.shadowChanged,
    ],
    [
      "agent and policy",
      { agentId: SUPPORT, policy: "sloth" },
      (r) => r.agentId === SUPPORT && r.policies.includes("sloth"),
    ],
    ["an agent with no records", { agentId: "nobody" }, () => false],
    ["hook token of invalid hook names (none here)", { hook: "unknown" }, () => false],
    ["agent and session that never met", { agentId: OTHER, sessionKey: NIGHT }, () => false],
  ];
  it.each(cases)("%s", async (_name, filter, keep) => {
    const want = expectedLabels(keep);
    const entries = await query(filter);
    expect(labels(entries)).toEqual(want);
    // Each entry says where it is stored, and its subject is decoded.
    for (const entry of entries) {
      const expected = EXPECTED.find((r) => r.label === labels([entry])[0])!;
      expect(entry.address).toEqual({
        agentId: expected.agentId,
        sessionKey: expected.sessionKey,
        hook: expected.hook,
        kind: expected.kind,
      });
      expect(entry.subject).toBe(
        log.bus.subjects.audit(
          expected.agentId,
          expected.sessionKey,
          expected.hook as "before_tool_call",
          expected.kind,
        ),
      );
      expect(entry.storedAt).toBeInstanceOf(Date);
    }
  });

  it("returns typed records: a shadow-changed decision carries the shadow decision", async () => {
    const [entry] = await query({ shadowChanged: true, agentId: OPS });
    const record = entry!.record;
    expect(record.kind).toBe("decision");
    if (record.kind !== "decision") return;
    expect(record.decision).toMatchObject({ outcome: "allow" });
    expect(record.shadow).toMatchObject({
      changed: true,
      decision: { outcome: "block", blockedBy: "candidate", blockReason: "destructive tool" },
    });
  });
});

describe("server-side and client-side filtering", () => {
  it("agent, session, hook and outcome become one subject filter: the server sends only matching records", async () => {
    const all = queryLog(log.bus, {});
    await collect(all);
    expect(all.stats).toMatchObject({
      filterSubject: `${log.namespace}.audit.*.*.*.*`,
      pending: EXPECTED.length,
      delivered: EXPECTED.length,
      matched: EXPECTED.length,
    });

    const ops = queryLog(log.bus, { agentId: OPS, hook: "before_tool_call", outcome: "block" });
    expect(labels(await collect(ops))).toEqual(["exec-2"]);
    expect(ops.stats).toEqual({
      filterSubject: `${log.namespace}.audit.ops=2Ebot.*.before_tool_call.block`,
      pending: 1,
      delivered: 1,
      matched: 1,
    });

    const session = queryLog(log.bus, { sessionKey: NIGHT });
    await collect(session);
    expect(session.stats.filterSubject).toBe(`${log.namespace}.audit.*.night=20run.*.*`);
    expect(session.stats.delivered).toBe(4);
  });

  it("hands the subject filter to the JetStream consumer itself", async () => {
    const get = vi.spyOn(log.bus.js.consumers, "get");
    try {
      await collect(queryLog(log.bus, { sessionKey: "conv-2", outcome: "late" }));
      expect(get).toHaveBeenCalledTimes(1);
      expect(get.mock.calls[0]![1]).toMatchObject({
        filter_subjects: `${log.namespace}.audit.*.conv-2.*.late`,
      });
    } finally {
      get.mockRestore();
    }
  });

  it("policy and shadowChanged are checked by the reader: it receives the records the subject matches", async () => {
    const byPolicy = queryLog(log.bus, { policy: "redactor" });
    expect(labels(await collect(byPolicy))).toEqual(["emit-1", "emit-2"]);
    expect(byPolicy.stats).toMatchObject({ delivered: EXPECTED.length, matched: 2 });

    // A server-side filter narrows what the client-side one has to look at.
    const narrowed = queryLog(log.bus, { hook: "before_response_emit", policy: "redactor" });
    expect(labels(await collect(narrowed))).toEqual(["emit-1", "emit-2"]);
    expect(narrowed.stats).toMatchObject({ delivered: 2, matched: 2 });
  });
});

describe("bounded reads", () => {
  it("an empty result returns at once, server-side or client-side", async () => {
    for (const filter of [
      { agentId: "nobody" },
      { outcome: "reply", agentId: OPS },
      { since: new Date(Date.now() + 3_600_000) },
      { policy: "nobody" },
    ] satisfies AuditFilter[]) {
      const started = performance.now();
      const q = queryLog(log.bus, filter);
      expect(await collect(q)).toEqual([]);
      expect(performance.now() - started, JSON.stringify(filter)).toBeLessThan(1500);
    }
    const none = queryLog(log.bus, { agentId: "nobody" });
    await collect(none);
    expect(none.stats).toMatchObject({ pending: 0, delivered: 0, matched: 0 });
  });

  it("limit stops after N matching records and reads no further", async () => {
    const two = queryLog(log.bus, { limit: 2 });
    expect(labels(await collect(two))).toEqual(["bar-1", "llm-1"]);
    expect(two.stats.delivered).toBe(2);

    const tools = queryLog(log.bus, { hook: "before_tool_call", limit: 3 });
    expect(labels(await collect(tools))).toEqual(["exec-1", "read-1", "other-1"]);

    // With a client-side filter, limit counts matches, not records read.
    const shadow = queryLog(log.bus, { shadowChanged: true, limit: 1 });
    expect(labels(await collect(shadow))).toEqual(["del-1"]);
    expect(shadow.stats.delivered).toBe(EXPECTED.findIndex((r) => r.label === "del-1") + 1);
  });

  it("since starts at a time (server side) and until stops at one (the read ends at the first later record)", async () => {
    const phaseA = expectedLabels((r) => r.phase === "A");
    const phaseB = expectedLabels((r) => r.phase === "B");

    const after = queryLog(log.bus, { since: log.boundary });
    expect(labels(await collect(after))).toEqual(phaseB);
    // The consumer started at the time: the records before it were never sent.
    expect(after.stats).toMatchObject({ pending: phaseB.length, delivered: phaseB.length });

    const before = queryLog(log.bus, { until: log.boundary });
    expect(labels(await collect(before))).toEqual(phaseA);
    // One record past `until` is read, then the read stops (the log is in time order).
    expect(before.stats.delivered).toBe(phaseA.length + 1);

    const window = await query({ since: log.boundary, until: log.boundary });
    expect(window).toEqual([]);

    const all = await query({});
    const first = all[0]!.storedAt;
    const last = all.at(-1)!.storedAt;
    expect(labels(await query({ since: first, until: last }))).toEqual(labels(all));
    expect(labels(await query({ agentId: OPS, since: log.boundary, outcome: "allow" }))).toEqual([
      "rm-1",
      "emit-2",
    ]);
    expect(labels(await query({ agentId: OPS, until: log.boundary }))).toEqual([]);
  });

  it("stops reading when aborted", async () => {
    const abort = new AbortController();
    const q = queryLog(log.bus, {}, { signal: abort.signal });
    const seen: string[] = [];
    for await (const entry of q) {
      seen.push(labels([entry])[0]!);
      if (seen.length === 3) abort.abort();
    }
    expect(seen).toEqual(EXPECTED.slice(0, 3).map((r) => r.label));
  });
});

describe("bad input", () => {
  const bad: [string, AuditFilter, string][] = [
    ["unknown hook", { hook: "before_everything" as "before_tool_call" }, "hook"],
    ["unknown outcome", { outcome: "maybe" as "allow" }, "outcome"],
    ["empty agent", { agentId: "" }, "agentId"],
    ["policy name that cannot exist", { policy: "no shell" }, "policy"],
    ["invalid date", { since: new Date("nope") }, "since"],
    ["since after until", { since: new Date(2), until: new Date(1) }, "since"],
    ["limit 0", { limit: 0 }, "limit"],
    ["fractional limit", { limit: 1.5 }, "limit"],
    [
      "shadowChanged with a non-decision outcome",
      { shadowChanged: true, outcome: "late" },
      "shadowChanged",
    ],
  ];
  it.each(bad)(
    "%s is HOOKBUS_INVALID_ARGUMENT, before anything is read",
    (_name, filter, argument) => {
      let thrown: unknown;
      try {
        queryLog(log.bus, filter);
      } catch (error) {
        thrown = error;
      }
      expect(isHookbusError(thrown, "HOOKBUS_INVALID_ARGUMENT")).toBe(true);
      expect((thrown as { details: { argument: string } }).details.argument).toBe(argument);
    },
  );

  it("a namespace without a log is HOOKBUS_LOG_UNAVAILABLE, at once", async () => {
    const nc = await connect({ servers: nats.url() });
    try {
      const empty = await Bus.open(nc, { namespace: uniqueNamespace("a") });
      const error = await collect(queryLog(empty, {})).catch((e: unknown) => e);
      expect(isHookbusError(error, "HOOKBUS_LOG_UNAVAILABLE")).toBe(true);
      const timeline = await sessionTimeline(empty, "s").catch((e: unknown) => e);
      expect(isHookbusError(timeline, "HOOKBUS_LOG_UNAVAILABLE")).toBe(true);
    } finally {
      await nc.drain();
    }
  });
});

describe("sessionTimeline", () => {
  it("lists a session's interceptions in log order with who decided what and each policy's latency", async () => {
    const steps = await sessionTimeline(log.bus, "conv-1", { agentId: SUPPORT });
    expect(steps.map((s) => [s.kind, s.hook, label(s.record)])).toEqual([
      ["decision", "before_agent_reply", "bar-1"],
      ["decision", "before_llm_call", "llm-1"],
      ["decision", "before_tool_call", "exec-1"],
      ["decision", "before_tool_call", "read-1"],
      ["observation", "after_tool_call", "obs:obs-1"],
      ["decision", "before_response_emit", "emit-1"],
    ]);
    const seqs = steps.map((s) => s.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(steps.every((s) => s.agentId === SUPPORT && s.sessionKey === "conv-1")).toBe(true);

    const [reply, llm, blocked, allowed, observed, modified] = steps as [
      DecisionStep,
      DecisionStep,
      DecisionStep,
      DecisionStep,
      (typeof steps)[number],
      DecisionStep,
    ];
    expect(reply).toMatchObject({
      outcome: "reply",
      decidedBy: { reply: ["greeter"], reason: ["greeter"] },
      reason: "greeting",
      summary: "reply by greeter (reason: greeting)",
      policies: [
        {
          policy: "greeter",
          version: "1.2.0",
          mode: "enforce",
          status: "ok",
          effect: "applied",
          summary: 'reply; reason: "greeting"',
        },
      ],
    });
    expect(llm).toMatchObject({
      outcome: "allow",
      summary: "-",
      policies: [{ policy: "sloth", status: "ok", effect: "no-opinion", summary: "no opinion" }],
    });
    expect(blocked).toMatchObject({
      outcome: "block",
      blockedBy: "no-shell",
      blockReason: "shell access is not allowed",
      decidedBy: { block: ["no-shell"] },
      summary: "blocked by no-shell: shell access is not allowed",
      policies: [
        {
          policy: "no-shell",
          mode: "enforce",
          effect: "applied",
          summary: "block: shell access is not allowed",
        },
        { policy: "candidate", mode: "shadow", effect: "no-opinion", summary: "no opinion" },
      ],
      shadow: { changed: false, outcome: "block", blockedBy: "no-shell" },
    });
    expect(allowed).toMatchObject({
      outcome: "allow",
      shadow: { changed: false, outcome: "allow" },
    });
    expect(observed).toMatchObject({
      kind: "observation",
      eventId: "obs-1",
      summary: "tool read_file",
    });
    expect(modified).toMatchObject({
      outcome: "modify",
      decidedBy: { content: ["redactor"] },
      summary: "content by redactor",
      policies: [{ policy: "redactor", effect: "applied", summary: "sets content" }],
    });
    for (const step of [reply, llm, blocked, allowed, modified]) {
      expect(step.latencyMs).toBeGreaterThanOrEqual(0);
      expect(step.latencyMs).toBeLessThan(5000);
      for (const policy of step.policies) {
        expect(policy.latencyMs).toBeGreaterThan(0);
        expect(policy.latencyMs).toBeLessThan(5000);
      }
    }
  });

  it("without an agent, includes every agent's records of that session key", async () => {
    const steps = await sessionTimeline(log.bus, "conv-1");
    expect(steps.map((s) => s.agentId)).toEqual([...Array<string>(6).fill(SUPPORT), OTHER]);
  });

  it("shows timeouts, the late verdict after its decision, and shadow decisions that would have changed the outcome", async () => {
    const steps = await sessionTimeline(log.bus, "conv-2", { agentId: SUPPORT });
    expect(steps.map((s) => s.kind)).toEqual(["decision", "decision", "late"]);
    const [shadowed, timedOut, late] = steps as [DecisionStep, DecisionStep, LateStep];
    expect(shadowed).toMatchObject({
      callId: "del-1",
      outcome: "allow",
      shadow: {
        changed: true,
        outcome: "block",
        blockedBy: "candidate",
        blockReason: "destructive tool",
      },
      summary: "- | shadow would: block (blocked by candidate: destructive tool)",
    });
    expect(timedOut).toMatchObject({
      callId: "llm-slow",
      outcome: "allow",
      policies: [
        {
          policy: "sloth",
          status: "timeout",
          effect: "failed-open",
          error: { code: "HOOKBUS_POLICY_TIMEOUT" },
        },
      ],
    });
    expect(timedOut.policies[0]!.summary).toMatch(/^timeout: HOOKBUS_POLICY_TIMEOUT/);
    expect(timedOut.policies[0]!.latencyMs).toBeGreaterThanOrEqual(SLOTH_TIMEOUT_MS - 10);
    expect(late).toMatchObject({
      kind: "late",
      callId: "llm-slow",
      policy: "sloth",
      timeoutMs: SLOTH_TIMEOUT_MS,
      wouldHaveBlocked: true,
    });
    expect(late.latencyMs).toBeGreaterThan(SLOTH_TIMEOUT_MS);
    expect(late.summary).toMatch(
      /^late verdict of sloth \(\d+(\.\d)? ms, deadline 250 ms\): would have blocked: too slow to say$/,
    );
  });

  it("shows errors in their place, and is empty for an unknown session", async () => {
    const steps = await sessionTimeline(log.bus, NIGHT, { agentId: OPS });
    expect(steps.map((s) => `${s.kind}:${s.hook}`)).toEqual([
      "decision:before_tool_call",
      "decision:before_tool_call",
      "error:before_tool_call",
      "decision:before_response_emit",
    ]);
    expect(steps[2]).toMatchObject({
      kind: "error",
      callId: "bad-1",
      error: { code: "HOOKBUS_INVALID_EVENT" },
    });
    expect(steps[2]!.summary).toMatch(/^HOOKBUS_INVALID_EVENT: /);
    expect(await sessionTimeline(log.bus, "no-such-session")).toEqual([]);
    expect(await sessionTimeline(log.bus, "conv-1", { agentId: OPS })).toEqual([]);
  });
});
