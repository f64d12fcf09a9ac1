/**
 * The worker's side of the policy protocol on a real NATS server, tested the way a coordinator
 * sees it: PolicyRequests on `<ns>.policy.<policy>.<hook>`, replies checked body and headers.
 */
import { randomBytes } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Header } from "../../../src/bus/headers.js";
import { runPolicy, type PolicyRunner } from "../../../src/worker/index.js";
import {
  connectTo,
  gate,
  PolicyAskClient,
  toolContext,
  toolEvent,
  uniqueNamespace,
  until,
  useNatsServer,
} from "./harness.js";
import { definePolicy } from "../../../src/policy/policy.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";

const nats = useNatsServer();
let nc: NatsConnection;
const runners: PolicyRunner[] = [];

beforeAll(async () => {
  nc = await connectTo(nats.url());
});

afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await nc?.drain();
});

/** A namespace with the given policies served, and a client to ask them. */
async function serve(...policies: Parameters<typeof runPolicy>[0][]) {
  return serveWith({}, ...policies);
}

async function serveWith(
  options: { concurrency?: number; maxQueued?: number },
  ...policies: Parameters<typeof runPolicy>[0][]
) {
  const namespace = uniqueNamespace();
  const runner = await runPolicy(policies.flat(), {
    nc,
    namespace,
    state: new MemorySessionStateStore(),
    ...options,
  });
  runners.push(runner);
  return { runner, client: await PolicyAskClient.open(nc, namespace) };
}

describe("verdict replies", () => {
  it("answers a verdict with the policy's name and version in body and headers", async () => {
    const seen: unknown[] = [];
    const policy = definePolicy({
      name: "no-rm",
      version: "1.2.0",
      hooks: {
        before_tool_call(event, ctx, tools) {
          seen.push({ event, ctx, callId: tools.callId, session: tools.state.sessionKey });
          if (event.toolName === "shell" && String(event.params["cmd"]).includes("rm"))
            return { block: true, blockReason: "no rm" };
          return undefined;
        },
      },
    });
    const { client } = await serve(policy);

    const blocked = await client.request("no-rm", "before_tool_call", {
      callId: "call-A",
      event: toolEvent("shell", { cmd: "rm -rf /" }),
      context: toolContext("s-1"),
    });
    expect(blocked.reply).toEqual({
      policy: "no-rm",
      version: "1.2.0",
      verdict: { block: true, blockReason: "no rm" },
    });
    expect(blocked.errorCode).toBeUndefined();
    // No header repeats the body: policy and version are in it (docs/protocol.md).
    expect(blocked.headers?.get("Hookbus-Policy") ?? "").toBe("");
    expect(seen[0]).toMatchObject({
      event: { toolName: "shell", params: { cmd: "rm -rf /" } },
      ctx: { agentId: "agent-1", sessionKey: "s-1", runId: "run-1" },
      callId: "call-A",
      session: "s-1",
    });
  });

  it("answers no opinion with the verdict absent (undefined, null and void all count)", async () => {
    const policy = definePolicy({
      name: "quiet",
      hooks: {
        before_tool_call(event) {
          if (event.toolName === "null") return null as unknown as undefined;
          if (event.toolName === "void") return;
          return undefined;
        },
      },
    });
    const { client } = await serve(policy);
    for (const toolName of ["undefined", "null", "void"]) {
      const { reply, errorCode, headers } = await client.request("quiet", "before_tool_call", {
        event: toolEvent(toolName),
        context: toolContext(),
      });
      expect(reply).toEqual({ policy: "quiet" });
      expect("verdict" in reply).toBe(false);
      expect(errorCode).toBeUndefined();
      expect(headers?.get("Hookbus-Policy-Version") ?? "").toBe("");
    }
  });

  it("answers no opinion with the same body between verdicts and errors (its bytes are encoded once)", async () => {
    const policy = definePolicy({
      name: "versioned-quiet",
      version: "7.1",
      hooks: {
        before_tool_call(event) {
          if (event.toolName === "exec") return { block: true, blockReason: "no shell" };
          if (event.toolName === "boom") throw new Error("boom");
          return undefined;
        },
      },
    });
    const { client } = await serve(policy);
    const ask = (toolName: string) =>
      client.request("versioned-quiet", "before_tool_call", {
        event: toolEvent(toolName),
        context: toolContext(),
      });
    for (let round = 0; round < 3; round++) {
      const quiet = await ask("read_file");
      expect(quiet.reply).toEqual({ policy: "versioned-quiet", version: "7.1" });
      expect(quiet.errorCode).toBeUndefined();
      const blocked = await ask("exec");
      expect(blocked.reply).toEqual({
        policy: "versioned-quiet",
        version: "7.1",
        verdict: { block: true, blockReason: "no shell" },
      });
      const failed = await ask("boom");
      expect(failed.errorCode).toBe("HOOKBUS_POLICY_ERROR");
      expect(failed.reply).toMatchObject({
        version: "7.1",
        error: { code: "HOOKBUS_POLICY_ERROR" },
      });
      expect("verdict" in failed.reply).toBe(false);
    }
  });

  it("serves several policies from one runner, each on its own subject", async () => {
    const a = definePolicy({
      name: "pa",
      hooks: { before_tool_call: () => ({ params: { by: "a" } }) },
    });
    const b = definePolicy({
      name: "pb",
      hooks: { before_response_emit: (event) => ({ content: event.content.toUpperCase() }) },
    });
    const { client } = await serve([a, b]);
    const ra = await client.request("pa", "before_tool_call", {
      event: toolEvent(),
      context: toolContext(),
    });
    expect(ra.reply.verdict).toEqual({ params: { by: "a" } });
    const rb = await client.request("pb", "before_response_emit", {
      event: { content: "hi", allContent: ["hi"] },
      context: { agentId: "a", sessionKey: "s", runId: "r" },
    });
    expect(rb.reply).toEqual({ policy: "pb", verdict: { content: "HI" } });
  });
});

describe("error replies", () => {
  let calls = 0;
  const policy = definePolicy({
    name: "strict",
    version: "7",
    hooks: {
      before_tool_call(event) {
        calls++;
        if (event.toolName === "throw") throw new Error("kaboom");
        if (event.toolName === "reject") return Promise.reject(new TypeError("async kaboom"));
        if (event.toolName === "bad-verdict")
          return { block: "yes" } as unknown as { block: boolean };
        if (event.toolName === "extra-field")
          return { block: true, content: "x" } as unknown as { block: boolean };
        return { block: false };
      },
    },
  });
  let client: PolicyAskClient;

  beforeAll(async () => {
    ({ client } = await serve(policy));
  });

  it("rejects an invalid event before the handler sees it", async () => {
    const before = calls;
    const { reply, errorCode } = await client.request("strict", "before_tool_call", {
      event: { params: {} }, // toolName missing
      context: toolContext(),
    });
    expect(errorCode).toBe("HOOKBUS_INVALID_EVENT");
    expect(reply.error?.code).toBe("HOOKBUS_INVALID_EVENT");
    expect(reply.error?.details?.["issues"]).toEqual([
      expect.objectContaining({ path: "toolName", rule: "invalid_type" }),
    ]);
    expect(reply).toMatchObject({ policy: "strict", version: "7" });
    expect(reply.verdict).toBeUndefined();
    expect(calls).toBe(before);
  });

  it("rejects an invalid context before the handler sees it", async () => {
    const before = calls;
    const { reply, errorCode } = await client.request("strict", "before_tool_call", {
      event: toolEvent(),
      context: { agentId: "a", sessionKey: "", runId: "r" },
    });
    expect(errorCode).toBe("HOOKBUS_INVALID_CONTEXT");
    expect(reply.error?.code).toBe("HOOKBUS_INVALID_CONTEXT");
    expect(calls).toBe(before);
  });

  it("answers a throwing or rejecting handler with HOOKBUS_POLICY_ERROR", async () => {
    for (const toolName of ["throw", "reject"]) {
      const { reply, errorCode, headers } = await client.request("strict", "before_tool_call", {
        event: toolEvent(toolName),
        context: toolContext(),
      });
      expect(errorCode).toBe("HOOKBUS_POLICY_ERROR");
      expect(reply.error?.code).toBe("HOOKBUS_POLICY_ERROR");
      expect(reply.error?.message).toMatch(toolName === "throw" ? /kaboom/ : /async kaboom/);
      expect(reply.verdict).toBeUndefined();
      expect(reply).toMatchObject({ policy: "strict", version: "7" });
      expect(headers?.get(Header.ErrorCode)).toBe("HOOKBUS_POLICY_ERROR");
    }
  });

  it("answers a verdict that fails the hook's schema with HOOKBUS_INVALID_VERDICT, never as a verdict", async () => {
    for (const toolName of ["bad-verdict", "extra-field"]) {
      const { reply, errorCode } = await client.request("strict", "before_tool_call", {
        event: toolEvent(toolName),
        context: toolContext(),
      });
      expect(errorCode).toBe("HOOKBUS_INVALID_VERDICT");
      expect(reply.error?.code).toBe("HOOKBUS_INVALID_VERDICT");
      expect(reply.verdict).toBeUndefined();
    }
  });

  it("answers a hook the policy has no handler for with HOOKBUS_POLICY_ERROR", async () => {
    const { reply, errorCode } = await client.request("strict", "before_tool_result", {
      event: { ...toolEvent(), result: "x" },
      context: toolContext(),
    });
    expect(errorCode).toBe("HOOKBUS_POLICY_ERROR");
    expect(reply.error?.message).toMatch(/no handler for before_tool_result/);
  });

  it("answers an undecodable body with HOOKBUS_BAD_MESSAGE", async () => {
    const notJson = await client.bytes(
      "strict",
      "before_tool_call",
      new TextEncoder().encode("{nope"),
    );
    expect(notJson.errorCode).toBe("HOOKBUS_BAD_MESSAGE");
    expect(notJson.reply).toMatchObject({
      policy: "strict",
      error: { code: "HOOKBUS_BAD_MESSAGE" },
    });

    const badGzip = await client.bytes(
      "strict",
      "before_tool_call",
      new TextEncoder().encode("not gzip"),
      {
        [Header.Encoding]: "gzip",
      },
    );
    expect(badGzip.errorCode).toBe("HOOKBUS_BAD_MESSAGE");

    const notAnEnvelope = await client.raw("strict", "before_tool_call", ["an", "array"]);
    expect(notAnEnvelope.errorCode).toBe("HOOKBUS_BAD_MESSAGE");
  });

  it("refuses a request whose body names another policy or hook than its subject", async () => {
    const wrongHook = await client.request("strict", "before_tool_call", {
      hook: "before_tool_result",
      event: toolEvent(),
      context: toolContext(),
    });
    expect(wrongHook.errorCode).toBe("HOOKBUS_BAD_MESSAGE");
    const wrongPolicy = await client.request("strict", "before_tool_call", {
      policy: "other",
      event: toolEvent(),
      context: toolContext(),
    });
    expect(wrongPolicy.errorCode).toBe("HOOKBUS_BAD_MESSAGE");
    // The subject's hook is compared whole: neither its end nor a longer name passes.
    for (const hook of ["tool_call", "xbefore_tool_call", "before_tool_call."]) {
      const partial = await client.request("strict", "before_tool_call", {
        hook,
        event: toolEvent(),
        context: toolContext(),
      });
      expect(partial.errorCode).toBe("HOOKBUS_BAD_MESSAGE");
    }
  });

  it("answers unknown and observational hooks with their codes", async () => {
    const unknown = await client.request("strict", "before_everything", {
      event: {},
      context: toolContext(),
    });
    expect(unknown.errorCode).toBe("HOOKBUS_UNKNOWN_HOOK");
    const observational = await client.request("strict", "after_tool_call", {
      event: toolEvent(),
      context: toolContext(),
    });
    expect(observational.errorCode).toBe("HOOKBUS_NOT_MODIFYING_HOOK");
  });
});

/**
 * A request's deadline as a coordinator of protocol 2 sends it (the body's `timeoutMs`, no header
 * block) and as an older one did (`Hookbus-Timeout-Ms`): a worker honours both.
 */
const DEADLINE_WAYS = {
  body: (body: Record<string, unknown>, ms: number) => ({
    body: { timeoutMs: ms, ...body },
    headers: {},
  }),
  header: (body: Record<string, unknown>, ms: number) => ({
    body,
    headers: { [Header.TimeoutMs]: String(ms) },
  }),
};

/** A handler that waits for its signal (or 3 s) and says when it was aborted. */
function patientPolicy(name: string) {
  const seen: { abortedAfterMs: number | undefined } = { abortedAfterMs: undefined };
  const policy = definePolicy({
    name,
    hooks: {
      async before_tool_call(_event, _ctx, { signal }) {
        const started = Date.now();
        await new Promise<void>((resolve) => {
          signal.addEventListener("abort", () => resolve(), { once: true });
          setTimeout(resolve, 3000);
        });
        seen.abortedAfterMs = signal.aborted ? Date.now() - started : undefined;
        return { block: true, blockReason: "late" };
      },
    },
  });
  return { policy, seen };
}

describe.each(Object.entries(DEADLINE_WAYS))("deadline in the %s", (way, sent) => {
  it("aborts tools.signal when the request's deadline passes, and still answers", async () => {
    const { policy, seen } = patientPolicy(`patient-${way}`);
    const { client } = await serve(policy);
    const body = {
      callId: "c-late",
      hook: "before_tool_call",
      policy: policy.name,
      event: toolEvent(),
      context: toolContext(),
    };
    const ask = sent(body, 200);
    const answer = await client.raw(policy.name, "before_tool_call", ask.body, ask.headers, 5000);
    expect(seen.abortedAfterMs).toBeGreaterThanOrEqual(150);
    expect(seen.abortedAfterMs).toBeLessThan(2000);
    // An answer after the deadline is still sent: the coordinator records it as a late verdict.
    expect(answer.reply.verdict).toEqual({ block: true, blockReason: "late" });
    expect(answer.reply.policy).toBe(policy.name);
  });
});

describe("deadline in both", () => {
  it("takes the body's deadline over the header's (a coordinator sends only one)", async () => {
    const { policy, seen } = patientPolicy("patient-both");
    const { client } = await serve(policy);
    const body = {
      timeoutMs: 200,
      callId: "c-both",
      hook: "before_tool_call",
      policy: policy.name,
      event: toolEvent(),
      context: toolContext(),
    };
    const answer = await client.raw(
      policy.name,
      "before_tool_call",
      body,
      { [Header.TimeoutMs]: "60000" },
      5000,
    );
    expect(seen.abortedAfterMs).toBeGreaterThanOrEqual(150);
    expect(seen.abortedAfterMs).toBeLessThan(2000);
    expect(answer.reply.verdict).toEqual({ block: true, blockReason: "late" });
  });
});

describe("queue", () => {
  /** One handler at a time, held until the test opens the gate. */
  function heldPolicy(name: string) {
    const held = gate();
    const seen: string[] = [];
    const policy = definePolicy({
      name,
      hooks: {
        async before_tool_call(_event, _ctx, { callId }) {
          seen.push(callId);
          if (callId === "first") await held.promise;
          return { params: { seen: callId } };
        },
      },
    });
    return { policy, held, seen };
  }
  const ask = (
    client: PolicyAskClient,
    policy: string,
    callId: string,
    timeoutMs: number,
    way: keyof typeof DEADLINE_WAYS = "header",
  ) => {
    const request = {
      callId,
      hook: "before_tool_call",
      policy,
      event: toolEvent(),
      context: toolContext(),
    };
    const sent = DEADLINE_WAYS[way](request, timeoutMs);
    return client.raw(
      policy,
      "before_tool_call",
      sent.body,
      sent.headers,
      Math.min(5000, timeoutMs + 1400),
    );
  };

  it("answers HOOKBUS_WORKER_OVERLOADED at once when its queue is full", async () => {
    const { policy, held, seen } = heldPolicy("crowded");
    const { client } = await serveWith({ concurrency: 1, maxQueued: 1 }, policy);
    const first = ask(client, "crowded", "first", 5000);
    await until(() => seen.includes("first"), 5000, "the first request in its handler");
    const queued = ask(client, "crowded", "queued", 5000);
    // The queue holds one: wait until the worker has it before sending the one too many.
    const refused = await until(
      async () => {
        const answer = await ask(client, "crowded", `extra-${seen.length}`, 5000);
        return answer.errorCode === "HOOKBUS_WORKER_OVERLOADED" ? answer : undefined;
      },
      5000,
      "a refused request",
    );
    expect(refused.reply.error?.code).toBe("HOOKBUS_WORKER_OVERLOADED");
    held.open();
    expect((await first).reply.verdict).toEqual({ params: { seen: "first" } });
    expect((await queued).reply.verdict).toEqual({ params: { seen: "queued" } });
    expect(seen.filter((id) => id.startsWith("extra-"))).toEqual([]);
  });

  it.each(Object.keys(DEADLINE_WAYS))(
    "drops a request whose deadline (in the %s) passed while it waited, without running its handler",
    async (way) => {
      const name = `expiring-${way}`;
      const { policy, held, seen } = heldPolicy(name);
      const { client } = await serveWith({ concurrency: 1 }, policy);
      const first = ask(client, name, "first", 5000);
      await until(() => seen.includes("first"), 5000, "the first request in its handler");
      // 100 ms to live, queued behind a handler held for longer than that.
      const expired = ask(client, name, "expired", 100, way as keyof typeof DEADLINE_WAYS).catch(
        (error: unknown) => error,
      );
      const sentAt = Date.now();
      await until(() => Date.now() - sentAt > 400, 5000, "the short deadline to pass");
      held.open();
      await first;
      // The next request runs; the expired one never reached its handler.
      expect((await ask(client, name, "after", 5000)).reply.verdict).toEqual({
        params: { seen: "after" },
      });
      expect(seen).toEqual(["first", "after"]);
      // Its caller got no reply (a timeout on its side), never a late verdict.
      expect(await expired).toBeInstanceOf(Error);
    },
  );
});

describe("large bodies", () => {
  it("decodes a gzip request and a blob request (3 MB event), and answers a large verdict as a blob", async () => {
    const received: number[] = [];
    const policy = definePolicy({
      name: "big",
      hooks: {
        before_llm_call(event) {
          const size = JSON.stringify(event.messages).length;
          received.push(size);
          // Echo the conversation back (a "sanitised" copy): the reply is as large as the request.
          if (event.model === "echo") return { messages: event.messages };
          return { systemPrompt: `saw ${size}` };
        },
      },
    });
    const { client } = await serve(policy);
    const ctx = { agentId: "a", sessionKey: "s", runId: "r" };

    // ~200 KB of repetitive text: above the gzip threshold, far below one message once zipped.
    const text = "the quick brown fox ".repeat(10_000);
    const gz = await client.request("big", "before_llm_call", {
      event: { messages: [{ role: "user", content: text }], model: "m" },
      context: ctx,
    });
    expect(gz.errorCode).toBeUndefined();
    expect(gz.reply.verdict).toEqual({ systemPrompt: `saw ${received[0]}` });
    expect(received[0]).toBeGreaterThan(200_000);

    // 3 MB of incompressible text cannot fit one message even gzipped: it travels as a blob.
    const noise = randomBytes(2_250_000).toString("base64");
    expect(gzipSync(noise).length).toBeGreaterThan(1024 * 1024);
    const encoded = await client.bus.codec.encode({ messages: [{ role: "user", content: noise }] });
    expect(encoded.encoding).toBe("blob");
    const blob = await client.request(
      "big",
      "before_llm_call",
      {
        event: { messages: [{ role: "user", content: noise }], model: "m" },
        context: ctx,
      },
      15_000,
    );
    expect(blob.errorCode).toBeUndefined();
    expect(received[1]).toBe(JSON.stringify([{ role: "user", content: noise }]).length);
    expect(blob.reply.verdict).toEqual({ systemPrompt: `saw ${received[1]}` });

    const echoed = await client.request(
      "big",
      "before_llm_call",
      {
        event: { messages: [{ role: "user", content: noise }], model: "echo" },
        context: ctx,
      },
      15_000,
    );
    expect(echoed.encoding).toBe("blob");
    expect(echoed.reply.verdict).toEqual({ messages: [{ role: "user", content: noise }] });
  });
});
