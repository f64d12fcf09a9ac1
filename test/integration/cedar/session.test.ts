/**
 * A registry with only Cedar policies governs a session on a real nats-server: no worker runs,
 * the coordinator evaluates the set in-process and records each evaluation like a verdict, with
 * the set's hash as its version. Block, approval, narrowing and session facts end to end.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Bus } from "../../../src/index.js";
import { HookbusClient, type DecisionRecord } from "../../../src/index.js";
import { answerApproval } from "../../../src/approvals/client.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { applyRegistry } from "../faults/harness.js";
import { readLog } from "../../support/log.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { replay } from "../../../src/replay/index.js";

const nats = useNatsServer();

const POLICIES = `
@id("no-shell-offered") forbid (principal, action == Action::"before_llm_call", resource is Tool)
when { resource.class == "shell" };

@id("fetch-allowlist") @reason("egress outside the allowlist")
forbid (principal, action in [Action::"after_llm_call", Action::"before_tool_call"], resource is Tool)
when { context has call && context.call has url && !(context.call.url.host == "docs.example.com") };

@id("no-rm-rf") @reason("recursive delete")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "shell" && context.call has command && context.call.command like "*rm -rf*" };

@id("send-needs-approval") @approval("Send a message?") @reason("outbound message")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "send-message" };

@id("no-send-after-web") @reason("the session read web content")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "send-message" && context.session.taint.contains("web-fetch") };
`;

const HOOKS = ["before_llm_call", "after_llm_call", "before_tool_call"] as const;

let coordinator: Coordinator | undefined;
let client: HookbusClient | undefined;

afterEach(async () => {
  await client?.close();
  await coordinator?.stop();
  client = undefined;
  coordinator = undefined;
});

async function start(namespace: string): Promise<{ bus: Bus; client: HookbusClient }> {
  const bus = await applyRegistry(await nats.connect(), namespace, {
    policies: [
      {
        name: "tool-rules",
        kind: "cedar",
        cedar: POLICIES,
        hooks: [...HOOKS],
        priority: 10,
        failMode: "fail-closed",
      },
    ],
  });
  coordinator = await startCoordinator({ nc: await nats.connect(), namespace, id: "c-cedar" });
  client = await HookbusClient.connect({ nc: await nats.connect(), namespace, timeoutMs: 8000 });
  return { bus, client };
}

const ctx = (extra: Record<string, string> = {}) => ({
  agentId: "agent-cedar",
  sessionKey: "s-cedar",
  runId: "r-1",
  ...extra,
});

describe("a registry of Cedar policies only", () => {
  it("blocks, asks, narrows and remembers the session, with no worker running", async () => {
    const namespace = uniqueNamespace("cedar");
    const { bus, client } = await start(namespace);

    const llm = await client.decide("before_llm_call", ctx(), {
      messages: [{ role: "user", content: "hi" }],
      tools: [{ name: "exec" }, { name: "web_fetch" }, { name: "send_email" }],
    });
    expect(llm.tools?.map((t) => ("name" in t ? t.name : ""))).toEqual(["web_fetch", "send_email"]);

    const calls = await client.decide("after_llm_call", ctx(), {
      toolCalls: [
        { id: "c1", name: "web_fetch", arguments: { url: "https://docs.example.com/a" } },
        { id: "c2", name: "web_fetch", arguments: { url: "https://evil.test/x" } },
      ],
    });
    expect(calls.toolCalls?.map((c) => c.id)).toEqual(["c1"]);

    const rm = await client.decide("before_tool_call", ctx({ runId: "r-2" }), {
      toolName: "Bash",
      toolCallId: "t-rm",
      params: { command: "rm -rf /" },
    });
    expect(rm).toMatchObject({
      outcome: "block",
      blockReason: "recursive delete (Cedar policy no-rm-rf)",
    });

    // An approval: the person approves and the call proceeds.
    const sent = client.decide(
      "before_tool_call",
      ctx({ runId: "r-3" }),
      { toolName: "send_email", toolCallId: "t-mail", params: { to: "a@b.c" } },
      {
        onApproval: (report) =>
          void answerApproval(
            bus.nc,
            { id: report.id, decision: "approve", from: "test" },
            { namespace, approver: "alice" },
          ),
      },
    );
    expect(await sent).toMatchObject({
      outcome: "allow",
      resolvedApproval: { resolution: "approved" },
    });

    // The session reads the web: a send is blocked from now on (a session fact, no approval asked).
    await client.observe("after_tool_call", ctx({ runId: "r-4" }), {
      toolName: "web_fetch",
      toolCallId: "t-web",
      params: { url: "https://docs.example.com/a" },
      result: "some page",
    });
    const late = await client.decide("before_tool_call", ctx({ runId: "r-5" }), {
      toolName: "send_email",
      toolCallId: "t-mail-2",
      params: { to: "a@b.c" },
    });
    expect(late).toMatchObject({
      outcome: "block",
      blockReason: "the session read web content (Cedar policy no-send-after-web)",
    });

    // Recorded like a worker's verdict, the set's hash as version.
    const records = await until(
      async () => {
        const log = (await readLog(bus)).filter((r): r is DecisionRecord => r.kind === "decision");
        return log.length >= 5 ? log : undefined;
      },
      10_000,
      "five decision records",
    );
    for (const record of records) {
      expect(record.outcomes).toHaveLength(1);
      expect(record.outcomes[0]).toMatchObject({ policy: "tool-rules", status: "ok" });
      expect(record.outcomes[0]?.version).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
  });

  it("picks up a new revision of the set without a restart", async () => {
    const namespace = uniqueNamespace("cedar-swap");
    const { client } = await start(namespace);
    const event = { toolName: "read", toolCallId: "t1", params: { path: "/etc/passwd" } };
    expect((await client.decide("before_tool_call", ctx(), event)).outcome).toBe("allow");
    await applyRegistry(await nats.connect(), namespace, {
      policies: [
        {
          name: "tool-rules",
          kind: "cedar",
          cedar: `@reason("no /etc") forbid (principal, action, resource) when { context has call && context.call.paths.contains("/etc/passwd") };`,
          hooks: ["before_tool_call"],
          priority: 10,
        },
      ],
    });
    await until(
      () => (coordinator!.registry().revision > 1 ? true : undefined),
      10_000,
      "the new revision at the coordinator",
    );
    const after = await client.decide("before_tool_call", ctx({ runId: "r-9" }), {
      ...event,
      toolCallId: "t2",
    });
    expect(after).toMatchObject({
      outcome: "block",
      blockReason: "no /etc (Cedar policy policy0)",
    });
  });

  it("replay re-decides the session under a changed .cedar file and shows the diff", async () => {
    const namespace = uniqueNamespace("cedar-replay");
    const { bus, client } = await start(namespace);
    await client.observe("after_tool_call", ctx(), {
      toolName: "web_fetch",
      params: { url: "https://docs.example.com/a" },
      result: "page",
    });
    const read = { toolName: "read", toolCallId: "t-read", params: { path: "/etc/passwd" } };
    expect((await client.decide("before_tool_call", ctx(), read)).outcome).toBe("allow");
    const records = await until(
      async () => {
        const log = await readLog(bus);
        return log.some((r) => r.kind === "decision") ? log : undefined;
      },
      10_000,
      "the session's records",
    );

    const candidate = (cedar: string) => ({
      policies: [],
      registry: {
        policies: [{ name: "tool-rules", kind: "cedar", cedar, hooks: [...HOOKS], priority: 10 }],
      },
      records,
    });
    const same = [];
    for await (const result of replay(candidate(POLICIES))) same.push(result);
    expect(same.map((r) => r.status)).toEqual(["unchanged"]);

    // The change under review: no file reads after web content reached the session.
    const changed = `${POLICIES}
@id("no-read-after-web") @reason("web content then a file read")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "file-read" && context.session.taint.contains("web-fetch") };`;
    const results = [];
    for await (const result of replay(candidate(changed))) results.push(result);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      status: "changed",
      change: "allow→block",
      replayed: {
        outcome: "block",
        blockReason: "web content then a file read (Cedar policy no-read-after-web)",
      },
    });
  });
});
