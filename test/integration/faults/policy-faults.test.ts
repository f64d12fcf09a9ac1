/**
 * Policy faults on a real NATS server, through the public API: a worker killed mid-call, a policy
 * with no worker, a handler that throws, a verdict that fails validation, a policy past its
 * timeout, and the per-hook default failure modes. Each must give the configured failure mode
 * within the call's deadline and a log record saying what happened.
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  definePolicy,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
  type Bus,
  type DecisionRecord,
  type Policy,
} from "../../../src/index.js";
import {
  applyRegistry,
  decisionsOf,
  lateVerdicts,
  llmCtx,
  llmEvent,
  readLog,
  sleep,
  startChild,
  toolCtx,
  toolEvent,
  uniqueNamespace,
  until,
  type Child,
  useNatsServer,
} from "./harness.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";
import { type RegistryDocumentInput } from "../../../src/registry/document.js";

const victimWorker = fileURLToPath(new URL("./fixtures/victim-worker.ts", import.meta.url));

const nats = useNatsServer();
const children: Child[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(() => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
});

const connection = () => nats.connect();

/**
 * A namespace with the registry applied, one coordinator, the given policies served in process
 * (each on its own connection, like separate processes) and an agent client.
 */
async function pipeline(registry: RegistryDocumentInput, policies: Policy[] = []) {
  const namespace = uniqueNamespace("pf");
  const admin = await connection();
  const bus = await applyRegistry(admin, namespace, registry);
  const coordinator = await startCoordinator({ nc: await connection(), namespace });
  cleanups.push(() => coordinator.stop());
  for (const policy of policies) {
    const runner = await runPolicy(policy, {
      nc: await connection(),
      namespace,
      state: new MemorySessionStateStore(),
    });
    cleanups.push(() => runner.stop());
  }
  const client = await HookbusClient.connect({
    nc: await connection(),
    namespace,
    timeoutMs: 5000,
  });
  cleanups.push(() => client.close());
  return { namespace, bus, client, admin };
}

async function onlyDecision(bus: Bus, callId: string | undefined): Promise<DecisionRecord> {
  expect(callId).toBeDefined();
  const records = await decisionsOf(bus, callId!);
  expect(records).toHaveLength(1);
  return records[0]!;
}

/** Time a promise. */
async function timed<T>(promise: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await promise;
  return { value, ms: Date.now() - started };
}

describe("a worker killed mid-call", () => {
  it("times out, fails closed (block naming the policy) or open (allow) per the registry, before the agent's deadline", async () => {
    const policyTimeoutMs = 1500;
    const agentTimeoutMs = 5000;
    const entry = (failMode: "fail-closed" | "fail-open") => ({
      policies: [
        {
          name: "victim",
          hooks: ["before_tool_call" as const],
          priority: 10,
          timeoutMs: policyTimeoutMs,
          failMode,
        },
      ],
    });
    const closed = await pipeline(entry("fail-closed"));
    const open = await pipeline(entry("fail-open"));

    const worker = startChild(["--import", "tsx", victimWorker], {
      NATS_URL_FOR_WORKER: nats.url(),
      WORKER_NAMESPACES: `${closed.namespace},${open.namespace}`,
    });
    children.push(worker);
    await until(
      () => worker.output().includes("ready"),
      20_000,
      `worker ready (stderr: ${worker.errors()})`,
    );

    const started = Date.now();
    const inClosed = closed.client.call(
      "before_tool_call",
      toolCtx("tc-closed"),
      toolEvent("tc-closed"),
      { callId: "kill-closed", timeoutMs: agentTimeoutMs },
    );
    const inOpen = open.client.call("before_tool_call", toolCtx("tc-open"), toolEvent("tc-open"), {
      callId: "kill-open",
      timeoutMs: agentTimeoutMs,
    });
    // Both handlers run in the child (they got these very calls), then it dies.
    await until(
      () =>
        worker.output().includes(`started ${closed.namespace} kill-closed`) &&
        worker.output().includes(`started ${open.namespace} kill-open`),
      5000,
      "both handlers started",
    );
    worker.child.kill("SIGKILL");
    expect(await worker.exited).toBeNull(); // killed by a signal, not exited

    const [closedResult, openResult] = await Promise.all([inClosed, inOpen]);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(agentTimeoutMs);
    expect(elapsed).toBeGreaterThanOrEqual(policyTimeoutMs - 50);

    expect(closedResult.source).toBe("coordinator");
    expect(closedResult.decision.outcome).toBe("block");
    expect(closedResult.decision.blockedBy).toBe("victim");
    expect(closedResult.decision.blockReason).toMatch(/policy "victim" failed closed \(timeout\)/);
    expect(openResult.decision).toMatchObject({ outcome: "allow" });

    const closedRecord = await onlyDecision(closed.bus, closedResult.callId);
    expect(closedRecord.decision).toEqual(closedResult.decision);
    expect(closedRecord.outcomes).toMatchObject([
      {
        policy: "victim",
        status: "timeout",
        failMode: "fail-closed",
        effect: "failed-closed",
        error: { code: "HOOKBUS_POLICY_TIMEOUT" },
      },
    ]);
    const openRecord = await onlyDecision(open.bus, openResult.callId);
    expect(openRecord.decision).toEqual(openResult.decision);
    expect(openRecord.outcomes).toMatchObject([
      {
        policy: "victim",
        status: "timeout",
        failMode: "fail-open",
        effect: "failed-open",
        error: { code: "HOOKBUS_POLICY_TIMEOUT" },
      },
    ]);

    // The crashed policy does not silently disappear: the next call finds no worker at once.
    const next = await timed(
      closed.client.call("before_tool_call", toolCtx("tc-after"), toolEvent("tc-after")),
    );
    expect(next.ms).toBeLessThan(policyTimeoutMs / 2);
    expect(next.value.decision).toMatchObject({ outcome: "block", blockedBy: "victim" });
    const nextRecord = await onlyDecision(closed.bus, next.value.callId);
    expect(nextRecord.outcomes[0]).toMatchObject({
      status: "unavailable",
      effect: "failed-closed",
    });
  });
});

/** The policy `victim` alone, on before_tool_call, failing closed. */
const victimOnly = (timeoutMs: number): RegistryDocumentInput => ({
  policies: [
    {
      name: "victim",
      hooks: ["before_tool_call"],
      priority: 10,
      timeoutMs,
      failMode: "fail-closed",
    },
  ],
});

/** A victim-worker.ts process serving `namespace`, ready. */
async function victimProcess(namespace: string, mode: "stuck" | "live"): Promise<Child> {
  const worker = startChild(["--import", "tsx", victimWorker], {
    NATS_URL_FOR_WORKER: nats.url(),
    WORKER_NAMESPACES: namespace,
    WORKER_MODE: mode,
  });
  children.push(worker);
  await until(() => worker.output().includes("ready"), 20_000, `${mode} worker ready`);
  return worker;
}

describe("a worker killed mid-call while another worker of the policy lives", () => {
  it("is asked again at the half of its timeout: the live worker decides the call, once", async () => {
    const policyTimeoutMs = 4000;
    const { namespace, bus, client } = await pipeline(victimOnly(policyTimeoutMs));
    const stuck = await victimProcess(namespace, "stuck");
    const live = await victimProcess(namespace, "live");
    const heldBy = (worker: Child, callId: string) =>
      worker.output().includes(`started ${namespace} ${callId}\n`);
    const answeredBy = (worker: Child, callId: string) =>
      worker.output().includes(`answered ${namespace} ${callId}\n`);

    // The queue group gives each ask to a worker at random: call until the stuck one holds one.
    let held:
      { callId: string; started: number; result: ReturnType<typeof client.call> } | undefined;
    for (let i = 0; i < 30 && held === undefined; i++) {
      const callId = `vanish-${i}`;
      const started = Date.now();
      const result = client.call("before_tool_call", toolCtx(`tc-${i}`), toolEvent(`tc-${i}`), {
        callId,
        timeoutMs: 10_000,
      });
      await until(() => heldBy(stuck, callId) || answeredBy(live, callId), 10_000, callId);
      if (heldBy(stuck, callId)) held = { callId, started, result };
      else expect((await result).decision.outcome).toBe("allow");
    }
    expect(held).toBeDefined();
    stuck.child.kill("SIGKILL");
    expect(await stuck.exited).toBeNull();

    const result = await held!.result;
    // Decided by the live worker, before the policy's timeout (it was a block at the timeout).
    expect(Date.now() - held!.started).toBeLessThan(policyTimeoutMs);
    expect(result.decision).toMatchObject({ outcome: "allow" });
    expect(answeredBy(live, held!.callId)).toBe(true);
    const record = await onlyDecision(bus, result.callId);
    expect(record.outcomes).toMatchObject([{ policy: "victim", status: "ok", version: "live" }]);
    expect(record.outcomes).toHaveLength(1);
  });
});

describe("an ask asked again while its worker still holds it", () => {
  it("is dropped by that worker: the handler runs once and its verdict decides the call", async () => {
    const policyTimeoutMs = 1200;
    let asks = 0;
    // One worker: the ask asked again at the half comes back to the worker holding the first.
    const slow = definePolicy({
      name: "victim",
      version: "1.0.0",
      hooks: {
        async before_tool_call() {
          asks++;
          await sleep(policyTimeoutMs * 0.8);
          return { block: true, blockReason: "the first ask's answer" };
        },
      },
    });
    const { bus, client } = await pipeline(victimOnly(policyTimeoutMs), [slow]);

    const result = await client.call("before_tool_call", toolCtx("tc-1"), toolEvent("tc-1"), {
      callId: "held-1",
    });
    expect(result.decision).toMatchObject({ outcome: "block", blockedBy: "victim" });
    expect(asks).toBe(1);
    const record = await onlyDecision(bus, "held-1");
    expect(record.outcomes).toMatchObject([{ policy: "victim", status: "ok" }]);
  });
});

describe("an ask answered twice (asked again, another worker answers first)", () => {
  it("counts the first verdict only: the later one is neither merged nor recorded as late", async () => {
    const policyTimeoutMs = 1200;
    const held = new Set<string>();
    const answered = new Set<string>();
    const worker = (version: string, slow: boolean) =>
      definePolicy({
        name: "victim",
        version,
        hooks: {
          async before_tool_call(event) {
            const tc = String(event.toolCallId);
            if (!slow) return undefined;
            held.add(tc);
            await sleep(policyTimeoutMs * 0.8);
            answered.add(tc);
            return { block: true, blockReason: "the slow worker's answer" };
          },
        },
      });
    const { bus, client } = await pipeline(victimOnly(policyTimeoutMs), [
      worker("slow", true),
      worker("quick", false),
    ]);
    // The queue group picks a worker per ask: call until the slow one held the first ask and the
    // quick one answered the ask asked again (else the slow one dropped it and decided).
    let decided: string | undefined;
    for (let i = 0; i < 30 && decided === undefined; i++) {
      const result = await client.call(
        "before_tool_call",
        toolCtx(`tc-${i}`),
        toolEvent(`tc-${i}`),
        {
          callId: `twice-${i}`,
        },
      );
      if (held.has(`tc-${i}`) && result.decision.outcome === "allow") decided = `tc-${i}`;
    }
    expect(decided).toBeDefined();
    const callId = `twice-${decided!.slice(3)}`;
    const record = await onlyDecision(bus, callId);
    expect(record.outcomes).toMatchObject([{ policy: "victim", status: "ok", version: "quick" }]);
    expect(record.outcomes).toHaveLength(1);
    await until(() => answered.has(decided!), 5000, "the slow worker answered");
    // A call after it, on the same verdict inbox, is decided after the late answer was read.
    const after = await client.call("before_tool_call", toolCtx("tc-x"), toolEvent("tc-x"), {
      callId: "twice-after",
    });
    await onlyDecision(bus, after.callId);
    expect(lateVerdicts(await readLog(bus)).filter((r) => r.callId === callId)).toEqual([]);
  });
});

describe("a policy in the registry with no worker", () => {
  for (const failMode of ["fail-closed", "fail-open"] as const) {
    it(`is unavailable at once (not after its timeout) and ${failMode === "fail-closed" ? "blocks, naming it" : "is ignored"} (${failMode})`, async () => {
      const { bus, client } = await pipeline({
        policies: [
          { name: "ghost", hooks: ["before_tool_call"], priority: 5, timeoutMs: 3000, failMode },
        ],
      });
      const { value: result, ms } = await timed(
        client.call("before_tool_call", toolCtx("tc-1"), toolEvent("tc-1")),
      );
      expect(ms).toBeLessThan(1000);
      if (failMode === "fail-closed") {
        expect(result.decision).toMatchObject({ outcome: "block", blockedBy: "ghost" });
        expect(result.decision.blockReason).toMatch(/policy "ghost" failed closed \(unavailable\)/);
      } else {
        expect(result.decision).toMatchObject({ outcome: "allow" });
      }
      const record = await onlyDecision(bus, result.callId);
      expect(record.decision).toEqual(result.decision);
      expect(record.outcomes).toMatchObject([
        {
          policy: "ghost",
          status: "unavailable",
          failMode,
          effect: failMode === "fail-closed" ? "failed-closed" : "failed-open",
          error: { code: "HOOKBUS_POLICY_UNAVAILABLE" },
        },
      ]);
    });
  }
});

describe("a handler that throws", () => {
  it("is an error (HOOKBUS_POLICY_ERROR) and its failure mode decides", async () => {
    const thrower = definePolicy({
      name: "thrower",
      version: "2.0.0",
      hooks: {
        before_tool_call() {
          throw new Error("boom: the policy's database is down");
        },
      },
    });
    const { bus, client } = await pipeline(
      {
        policies: [
          { name: "thrower", hooks: ["before_tool_call"], priority: 5, failMode: "fail-closed" },
        ],
      },
      [thrower],
    );
    const result = await client.call("before_tool_call", toolCtx("tc-1"), toolEvent("tc-1"));
    expect(result.decision).toMatchObject({ outcome: "block", blockedBy: "thrower" });
    expect(result.decision.blockReason).toMatch(/policy "thrower" failed closed \(error\)/);
    const record = await onlyDecision(bus, result.callId);
    expect(record.outcomes).toMatchObject([
      {
        policy: "thrower",
        version: "2.0.0",
        status: "error",
        effect: "failed-closed",
        error: { code: "HOOKBUS_POLICY_ERROR" },
      },
    ]);
  });
});

describe("a verdict that fails validation", () => {
  it("from a TypeScript worker (a field the hook does not allow) is invalid; fail-open ignores it", async () => {
    const sloppy = definePolicy({
      name: "sloppy",
      hooks: {
        // What a JavaScript caller (or a cast) can do: a field before_llm_call verdicts lack.
        before_llm_call: (() => ({
          systemPrompt: "be nice",
          launchMissiles: true,
        })) as unknown as () => undefined,
      },
    });
    const { bus, client } = await pipeline(
      {
        policies: [
          { name: "sloppy", hooks: ["before_llm_call"], priority: 5, failMode: "fail-open" },
        ],
      },
      [sloppy],
    );
    const result = await client.call("before_llm_call", llmCtx(), llmEvent());
    expect(result.source).toBe("coordinator");
    expect(result.decision).toMatchObject({ outcome: "allow" });
    // Nothing of the invalid verdict was applied.
    expect(result.decision).not.toHaveProperty("systemPrompt");
    const record = await onlyDecision(bus, result.callId);
    expect(record.outcomes).toMatchObject([
      {
        policy: "sloppy",
        status: "invalid",
        effect: "failed-open",
        error: { code: "HOOKBUS_INVALID_VERDICT" },
      },
    ]);
  });

  it("from a worker in another language (raw NATS, a bad verdict body) is invalid; fail-closed blocks", async () => {
    const { namespace, bus, client, admin } = await pipeline({
      policies: [
        { name: "foreign", hooks: ["before_tool_call"], priority: 5, failMode: "fail-closed" },
      ],
    });
    // A responder that follows the protocol's subjects and envelope but sends a verdict whose
    // `block` is not a boolean, and sets no error header (it believes the verdict is fine).
    const badVerdict = { block: "yes please", blockReason: 42 };
    const raw = admin.subscribe(`${namespace}.policy.foreign.*`, {
      queue: `${namespace}-policy-foreign`,
      callback: (error, msg) => {
        if (error !== null) return;
        msg.respond(
          JSON.stringify({ policy: "foreign", version: "python-0.1", verdict: badVerdict }),
        );
      },
    });
    cleanups.push(() => {
      raw.unsubscribe();
      return Promise.resolve();
    });
    await admin.flush();

    const result = await client.call("before_tool_call", toolCtx("tc-1"), toolEvent("tc-1"));
    expect(result.decision).toMatchObject({ outcome: "block", blockedBy: "foreign" });
    expect(result.decision.blockReason).toMatch(/policy "foreign" failed closed \(invalid\)/);
    const record = await onlyDecision(bus, result.callId);
    expect(record.outcomes).toMatchObject([
      {
        policy: "foreign",
        version: "python-0.1",
        status: "invalid",
        effect: "failed-closed",
        // An invalid verdict is kept as its digest and size, not the payload (issue 9).
        rejectedVerdict: {
          sha256: createHash("sha256").update(JSON.stringify(badVerdict)).digest("hex"),
          bytes: Buffer.byteLength(JSON.stringify(badVerdict)),
        },
        error: { code: "HOOKBUS_INVALID_VERDICT" },
      },
    ]);
    expect(record.outcomes[0]).not.toHaveProperty("verdict");
  });
});

describe("a slow policy past its timeout", () => {
  it("is a timeout in the decision, and its late verdict gets its own record (would have blocked: true/false)", async () => {
    const policyTimeoutMs = 300;
    const handlerMs = 900;
    const slow = (name: string, blocks: boolean) =>
      definePolicy({
        name,
        version: "1.0.0",
        hooks: {
          async before_tool_call() {
            await sleep(handlerMs); // slower than the policy's timeout
            return blocks ? { block: true, blockReason: `${name} says no` } : undefined;
          },
        },
      });
    const { bus, client } = await pipeline(
      {
        policies: [
          {
            name: "sloth",
            hooks: ["before_tool_call"],
            priority: 10,
            timeoutMs: policyTimeoutMs,
            failMode: "fail-open",
          },
          {
            name: "snail",
            hooks: ["before_tool_call"],
            priority: 5,
            timeoutMs: policyTimeoutMs,
            failMode: "fail-open",
          },
        ],
      },
      [slow("sloth", true), slow("snail", false)],
    );

    const { value: result, ms } = await timed(
      client.call("before_tool_call", toolCtx("tc-1"), toolEvent("tc-1"), { callId: "slow-1" }),
    );
    // Answered at the policies' deadline, not when they finally answered.
    expect(ms).toBeLessThan(handlerMs);
    expect(result.decision).toMatchObject({ outcome: "allow" });
    const record = await onlyDecision(bus, "slow-1");
    expect(record.outcomes).toMatchObject(
      ["sloth", "snail"].map((policy) => ({
        policy,
        status: "timeout",
        effect: "failed-open",
        error: { code: "HOOKBUS_POLICY_TIMEOUT" },
      })),
    );

    const late = await until(
      async () => {
        const records = lateVerdicts(await readLog(bus)).filter((r) => r.callId === "slow-1");
        return records.length === 2 ? records : undefined;
      },
      5000,
      "two late-verdict records",
    );
    const byPolicy = new Map(late.map((r) => [r.policy, r]));
    expect(byPolicy.get("sloth")).toMatchObject({
      kind: "late",
      callId: "slow-1",
      hook: "before_tool_call",
      version: "1.0.0",
      verdict: { block: true, blockReason: "sloth says no" },
      timeoutMs: policyTimeoutMs,
      wouldHaveBlocked: true,
    });
    expect(byPolicy.get("snail")).toMatchObject({
      kind: "late",
      callId: "slow-1",
      wouldHaveBlocked: false,
    });
    for (const r of late) expect(r.latencyMs).toBeGreaterThan(policyTimeoutMs);
    // Still exactly one decision record for the call.
    expect(await decisionsOf(bus, "slow-1")).toHaveLength(1);
  });

  it("files each late verdict under its own call when two agents use the same callId", async () => {
    const policyTimeoutMs = 300;
    // Blocks agent-b's call only, so the two late verdicts differ.
    const sloth = definePolicy({
      name: "sloth",
      version: "1.0.0",
      hooks: {
        async before_tool_call(_event, context) {
          await sleep(900); // a policy slower than its 300 ms timeout
          return context.agentId === "agent-b" ? { block: true, blockReason: "not b" } : undefined;
        },
      },
    });
    const { bus, client } = await pipeline(
      {
        policies: [
          {
            name: "sloth",
            hooks: ["before_tool_call"],
            priority: 10,
            timeoutMs: policyTimeoutMs,
            failMode: "fail-open",
          },
        ],
      },
      [sloth],
    );
    const as = (agentId: string) => ({ ...toolCtx("tc-1"), agentId });
    await Promise.all(
      ["agent-a", "agent-b"].map((agentId) =>
        client.call("before_tool_call", as(agentId), toolEvent("tc-1"), { callId: "shared-1" }),
      ),
    );
    const late = await until(
      async () => {
        const records = lateVerdicts(await readLog(bus)).filter((r) => r.callId === "shared-1");
        return records.length === 2 ? records : undefined;
      },
      5000,
      "two late-verdict records",
    );
    const byAgent = new Map(late.map((r) => [String(r.context.agentId), r]));
    expect([...byAgent.keys()].sort()).toEqual(["agent-a", "agent-b"]);
    expect(byAgent.get("agent-a")).toMatchObject({ wouldHaveBlocked: false });
    expect(byAgent.get("agent-b")).toMatchObject({
      wouldHaveBlocked: true,
      verdict: { block: true, blockReason: "not b" },
    });
  });
});

describe("a policy timeout longer than the call's deadline", () => {
  it("is cut to the call's deadline: the agent still gets the failure mode's decision, not a call timeout", async () => {
    const agentTimeoutMs = 1500;
    const patient = definePolicy({
      name: "patient",
      hooks: {
        async before_tool_call() {
          await sleep(agentTimeoutMs + 300); // a policy slower than the call's deadline
          return { block: true, blockReason: "finally" };
        },
      },
    });
    const { bus, client } = await pipeline(
      {
        policies: [
          {
            name: "patient",
            hooks: ["before_tool_call"],
            priority: 1,
            timeoutMs: 10_000,
            failMode: "fail-closed",
          },
        ],
      },
      [patient],
    );
    const { value: result, ms } = await timed(
      client.call("before_tool_call", toolCtx("tc-1"), toolEvent("tc-1"), {
        timeoutMs: agentTimeoutMs,
      }),
    );
    expect(ms).toBeLessThan(agentTimeoutMs);
    expect(result.decision).toMatchObject({ outcome: "block", blockedBy: "patient" });
    const record = await onlyDecision(bus, result.callId);
    expect(record.outcomes).toMatchObject([
      {
        policy: "patient",
        status: "timeout",
        effect: "failed-closed",
        error: { code: "HOOKBUS_POLICY_TIMEOUT" },
      },
    ]);
    expect(record.outcomes[0]!.latencyMs).toBeLessThan(agentTimeoutMs);
  });
});

describe("per-hook default failure modes (no failMode in the registry)", () => {
  it("before_tool_call fails closed, before_llm_call fails open", async () => {
    const crashy = definePolicy({
      name: "crashy",
      hooks: {
        before_tool_call() {
          throw new Error("crash");
        },
        before_llm_call() {
          throw new Error("crash");
        },
      },
    });
    const { bus, client } = await pipeline(
      {
        policies: [{ name: "crashy", hooks: ["before_tool_call", "before_llm_call"], priority: 1 }],
      },
      [crashy],
    );

    const tool = await client.call("before_tool_call", toolCtx("tc-1"), toolEvent("tc-1"));
    expect(tool.decision).toMatchObject({ outcome: "block", blockedBy: "crashy" });
    expect((await onlyDecision(bus, tool.callId)).outcomes).toMatchObject([
      {
        policy: "crashy",
        status: "error",
        failMode: "fail-closed",
        effect: "failed-closed",
        error: { code: "HOOKBUS_POLICY_ERROR" },
      },
    ]);

    const llm = await client.call("before_llm_call", llmCtx(), llmEvent());
    expect(llm.decision).toMatchObject({ outcome: "allow" });
    expect((await onlyDecision(bus, llm.callId)).outcomes).toMatchObject([
      {
        policy: "crashy",
        status: "error",
        failMode: "fail-open",
        effect: "failed-open",
        error: { code: "HOOKBUS_POLICY_ERROR" },
      },
    ]);
  });
});
