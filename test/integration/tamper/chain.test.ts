/**
 * The hash chain on a real log: every kind of record a session gets (decisions, a block, an
 * error, a late verdict, observations) is linked 1..n; concurrent writers (two coordinators and
 * the agent) never fork it; a retried call voids its second position; and a clean log verifies
 * (library and CLI, exit 0).
 */
import { headers as natsHeaders } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import {
  chainKey,
  definePolicy,
  startCoordinator,
  verifyLog,
  type Coordinator,
} from "../../../src/index.js";
import { openChainBucket } from "../../../src/log/chain.js";
import { until, useNatsServer, startPipeline, uniqueNamespace } from "../pipeline/harness.js";
import {
  AGENT,
  SESSION,
  expectOneChain,
  guard,
  hookbus,
  run,
  sessionMessages,
  sessionPipeline,
  toolCtx,
  toolEvent,
} from "./harness.js";

const nats = useNatsServer();

describe("every record of a session is chained", () => {
  it("links decisions, a block, an error, a late verdict and observations 1..n; the head holds n; verify is clean", async () => {
    const sloth = definePolicy({
      name: "sloth",
      hooks: {
        async before_tool_result() {
          await new Promise((r) => setTimeout(r, 400));
          return { block: true, blockReason: "too late" };
        },
      },
    });
    const { p } = await sessionPipeline(nats.url(), { calls: 3, editable: false });
    await p.apply({
      policies: [
        { name: "guard", hooks: ["before_tool_call", "before_response_emit"], priority: 10 },
        {
          name: "sloth",
          hooks: ["before_tool_result"],
          priority: 5,
          timeoutMs: 100,
          failMode: "fail-open",
        },
      ],
    });
    await p.serve(sloth);
    // A late verdict (the record comes after the decision, from the coordinator).
    await p.client.call(
      "before_tool_result",
      toolCtx("tc-9", "read_file"),
      { ...toolEvent("tc-9", "read_file"), result: "x", isError: false, durationMs: 1 },
      { callId: "slow-1" },
    );
    // A call the coordinator rejects (an invalid event) is recorded as an error record.
    const body = await p.bus.codec.encode({
      callId: "bad-1",
      hook: "before_tool_call",
      context: toolCtx("tc-10", "read_file"),
      event: { toolName: 42 },
    });
    const h = natsHeaders();
    h.set("Hookbus-Call-Id", "bad-1");
    h.set("Hookbus-Timeout-Ms", "3000");
    const reply = await p.connections.agent.request(
      p.subjects.call(AGENT, "before_tool_call"),
      body.data,
      { headers: h, timeout: 3000 },
    );
    expect(reply.headers?.get("Hookbus-Error-Code")).toBe("HOOKBUS_INVALID_EVENT");

    const entries = await until(
      async () => {
        const all = await sessionMessages(p.bus, AGENT, SESSION);
        return all.some((e) => e.raw.kind === "late") ? true : false;
      },
      5000,
      "the late verdict record",
    ).then(() => sessionMessages(p.bus, AGENT, SESSION));
    const kinds = new Set(entries.map((e) => e.raw.kind));
    expect(kinds).toEqual(new Set(["decision", "observation", "late", "error"]));
    const chain = expectOneChain(entries);
    expect(chain).toHaveLength(3 + 3 + 1 + 1 + 1 + 1);

    const kv = await openChainBucket(p.connections.reader, p.subjects);
    const head = (await kv.get(chainKey(AGENT, SESSION)))!.json<{ index: number; hash: string }>();
    expect(head).toEqual({ index: chain.length, hash: chain.at(-1)!.raw.chain!.hash });

    const report = await verifyLog(p.bus, { sessionKey: SESSION });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.sessions).toHaveLength(1);
    expect(report.sessions[0]).toMatchObject({
      agentId: AGENT,
      sessionKey: SESSION,
      records: chain.length,
      lastIndex: chain.length,
      head: { index: chain.length },
      voided: [],
    });

    const cli = await hookbus(nats.url(), p.namespace, "audit", "verify", "--session", SESSION);
    expect(cli.stderr).toBe("");
    expect(cli.stdout).toMatch(/^OK: 10 records in 1 session\(s\) of namespace .* verified/m);
    expect(cli.code).toBe(0);
  });

  it("chains each session on its own, and `audit verify` without filters checks them all", async () => {
    const { p } = await sessionPipeline(nats.url(), { calls: 2, editable: false });
    for (const s of ["other-1", "other 2"]) {
      await p.client.call(
        "before_tool_call",
        toolCtx("x", "read_file", s),
        toolEvent("x", "read_file"),
      );
      expect(expectOneChain(await sessionMessages(p.bus, AGENT, s))).toHaveLength(1);
    }
    const report = await verifyLog(p.bus);
    expect(report.ok).toBe(true);
    expect(report.sessions.map((s) => s.sessionKey).sort()).toEqual(
      ["other 2", "other-1", SESSION].sort(),
    );
    const cli = await hookbus(nats.url(), p.namespace, "audit", "verify", "--json");
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: true, records: report.records });
  });
});

describe("concurrent writers of one session", () => {
  it("two coordinators and the agent's observations, all at once, never fork the chain", async () => {
    const namespace = uniqueNamespace("t");
    const p = await startPipeline(nats.url(), {
      namespace,
      registry: {
        policies: [{ name: "guard", hooks: ["before_tool_call"], priority: 10 }],
      },
      policies: [guard],
    });
    const { connect } = await import("@nats-io/transport-node");
    const nc2 = await connect({ servers: nats.url() });
    let second: Coordinator | undefined;
    try {
      second = await startCoordinator({ nc: nc2, namespace, id: "coordinator-two" });
      await until(() => second!.registry().revision === p.revision, 5000, "second coordinator");
      const calls = Array.from({ length: 60 }, (_, i) => {
        const tool = i % 4 === 0 ? "exec" : "read_file";
        return p.client.call("before_tool_call", toolCtx(`c${i}`, tool), toolEvent(`c${i}`, tool), {
          callId: `cc-${i}`,
        });
      });
      const observations = Array.from({ length: 20 }, (_, i) =>
        p.client.observe("llm_input", run(), { messages: [{ role: "user", content: `m${i}` }] }),
      );
      await Promise.all([...calls, ...observations]);
    } finally {
      await second?.stop();
      await nc2.drain();
    }

    const entries = await sessionMessages(p.bus, AGENT, SESSION);
    expect(entries).toHaveLength(80);
    const chain = expectOneChain(entries);
    // Both coordinators wrote (the queue group spreads calls and observations); agents never write.
    const writers = new Set(chain.map((e) => e.raw.coordinator ?? "agent"));
    expect(writers.has("agent")).toBe(false);
    expect(writers.size).toBe(2);
    expect(writers.has("coordinator-two")).toBe(true);
    const report = await verifyLog(p.bus, { agentId: AGENT, sessionKey: SESSION });
    expect(report.problems).toEqual([]);
    expect(report.sessions[0]).toMatchObject({ records: 80, lastIndex: 80, head: { index: 80 } });
  });
});

describe("retried calls", () => {
  it("a call retried with the same id is stored once; its second position is voided, and verify stays clean", async () => {
    const { p } = await sessionPipeline(nats.url(), { calls: 1, editable: false });
    const first = await p.client.call(
      "before_tool_call",
      toolCtx("r", "read_file"),
      toolEvent("r", "read_file"),
      { callId: "retry-1" },
    );
    const again = await p.client.call(
      "before_tool_call",
      toolCtx("r", "read_file"),
      toolEvent("r", "read_file"),
      { callId: "retry-1" },
    );
    expect(again.recordSeq).toBe(first.recordSeq);
    expect(again.decision).toEqual(first.decision);
    // And an observation published twice with one event id.
    await p.client.observe("llm_input", run(), { messages: [] }, { eventId: "dup-ev" });
    await p.client.observe("llm_input", run(), { messages: [] }, { eventId: "dup-ev" });
    await p.client.call("before_tool_call", toolCtx("z", "read_file"), toolEvent("z", "read_file"));

    const entries = await sessionMessages(p.bus, AGENT, SESSION);
    // 1 decision + 1 observation + emit, then retry-1, dup-ev and one more decision.
    expect(entries).toHaveLength(6);
    const report = await verifyLog(p.bus, { sessionKey: SESSION });
    expect(report.problems).toEqual([]);
    expect(report.sessions[0]!.voided).toHaveLength(2);
    expect(report.sessions[0]!.head!.index).toBe(8);
    const cli = await hookbus(nats.url(), p.namespace, "audit", "verify", "--verbose");
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/2 voided \(retried duplicates\): ok/);
  });
});

describe("verifying a live log", () => {
  it("does not report records in flight (claimed, not yet stored) while the session is being written", async () => {
    const { p } = await sessionPipeline(nats.url(), { calls: 1, editable: false });
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        await Promise.all([
          p.client.call(
            "before_tool_call",
            toolCtx(`w${i}`, "read_file"),
            toolEvent(`w${i}`, "read_file"),
          ),
          p.client.observe("llm_input", run(), { messages: [] }),
          p.client.call("before_tool_call", toolCtx(`v${i}`, "exec"), toolEvent(`v${i}`, "exec")),
        ]);
      }
    })();
    try {
      for (let round = 0; round < 3; round++) {
        const report = await verifyLog(p.bus, { sessionKey: SESSION, settleMs: 300 });
        expect(report.problems).toEqual([]);
        expect(report.records).toBeGreaterThan(0);
      }
    } finally {
      writing = false;
      await writer;
    }
    expect((await verifyLog(p.bus, { sessionKey: SESSION, settleMs: 0 })).ok).toBe(true);
  }, 60_000);
});
