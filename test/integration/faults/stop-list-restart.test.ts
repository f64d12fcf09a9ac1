/**
 * Issue 32, item 1: a NATS restart does not turn into a fail-closed burst. The test owns its
 * server and keeps it down longer than the stop list's staleness bound (2 s), so every
 * coordinator's last good read is stale when it comes back. Calls sent right after the restart
 * wait for the coordinator's re-read (within their deadline) instead of being blocked with
 * HOOKBUS_STOP_LIST_UNREADABLE; a stop in force still blocks its tool across the same restart,
 * and a stop made after it takes effect.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  definePolicy,
  HookbusClient,
  runPolicy,
  type CallResult,
  type PolicyRunner,
} from "../../../src/index.js";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { STOPS_STALE_AFTER_MS } from "../../../src/registry/stops.js";
import { applyRegistry, sleep, uniqueNamespace, until, useNatsServer } from "./harness.js";

// This file kills and restarts its server, so it must own it (never someone's NATS_URL).
const nats = useNatsServer({ own: true });
const namespace = uniqueNamespace("stoprestart");
let coordinator: Coordinator | undefined;
let runner: PolicyRunner | undefined;
let client: HookbusClient | undefined;

afterAll(async () => {
  await client?.close();
  await runner?.stop();
  await coordinator?.stop();
}, 30_000);

async function cli(...args: string[]) {
  const lines: string[] = [];
  const out: Output = { print: (l) => lines.push(l), error: (l) => lines.push(l) };
  const code = await main([...args, "--server", nats.url(), "--namespace", namespace], out);
  return { code, text: lines.join("\n") };
}

let n = 0;
function toolCall(agent: HookbusClient, tool: string): Promise<CallResult<"before_tool_call">> {
  const id = `${tool}-${++n}`;
  return agent.call(
    "before_tool_call",
    { agentId: "agent-r", sessionKey: "s", runId: "r", toolCallId: id },
    { toolName: tool, toolCallId: id, params: {} },
    { callId: id, timeoutMs: 8000 },
  );
}

/** Kill the server, keep it down past the stop list's staleness bound, start it again. */
async function restartPastStaleness(): Promise<void> {
  await nats.handle().kill();
  await sleep(STOPS_STALE_AFTER_MS + 500);
  await nats.handle().start();
}

/** Every reason a call was blocked for, counted. */
function reasons(results: readonly CallResult<"before_tool_call">[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { decision } of results) {
    const key = decision.outcome === "block" ? String(decision.blockReason) : decision.outcome;
    const short = key.replace(/ stopped by .*/, "");
    counts.set(short, (counts.get(short) ?? 0) + 1);
  }
  return counts;
}

describe("the stop list across a NATS restart", () => {
  it("calls sent right after a restart wait for the re-read and are not blocked; a stop still holds", async () => {
    await applyRegistry(await nats.connect(), namespace, {
      policies: [
        { name: "count", hooks: ["before_tool_call"], priority: 1, failMode: "fail-open" },
      ],
    });
    coordinator = await startCoordinator({ nc: await nats.connect("c"), namespace, id: "c-r" });
    const counting = definePolicy({ name: "count", hooks: { before_tool_call: () => undefined } });
    runner = await runPolicy(counting, { nc: await nats.connect("w"), namespace });
    client = await HookbusClient.connect({ nc: await nats.connect("a"), namespace });
    const agent = client;
    await until(async () => (await toolCall(agent, "read_file")).decision.outcome === "allow");

    // 1. Nothing stopped: the calls sent the moment the server is back are all allowed.
    await restartPastStaleness();
    const first = await Promise.all(Array.from({ length: 40 }, () => toolCall(agent, "read_file")));
    console.log("right after the restart, nothing stopped:", Object.fromEntries(reasons(first)));
    expect(reasons(first)).toEqual(new Map([["allow", 40]]));

    // 2. A stop in force before the restart holds across it, and blocks only what it stops.
    expect((await cli("stop", "tool", "exec", "--by", "ops", "--reason", "r")).code).toBe(0);
    await restartPastStaleness();
    const second = await Promise.all(
      Array.from({ length: 40 }, (_, i) => toolCall(agent, i % 2 === 0 ? "exec" : "read_file")),
    );
    console.log("right after the restart, exec stopped:", Object.fromEntries(reasons(second)));
    expect(reasons(second)).toEqual(
      new Map([
        ["emergency stop: tool exec", 20],
        ["allow", 20],
      ]),
    );
    for (const result of second.filter((r) => r.decision.outcome === "block"))
      expect(result.decision.blockedBy).toBe("hookbus:emergency-stop");
    // The agent's fast path (before_tool_result has no policy) re-reads too: exec is never
    // answered locally, read_file is again once the list is read.
    const result = (tool: string) => {
      const id = `${tool}-${++n}`;
      return agent.call(
        "before_tool_result",
        { agentId: "agent-r", sessionKey: "s", runId: "r", toolCallId: id },
        { toolName: tool, toolCallId: id, params: {}, result: "ok", isError: false },
      );
    };
    expect(await result("exec")).toMatchObject({
      source: "coordinator",
      decision: { outcome: "block", blockedBy: "hookbus:emergency-stop" },
    });
    await until(async () => (await result("read_file")).source === "fast-path", 3000);

    // 3. A stop made after the restart takes effect, confirmed by the coordinator.
    const stop = await cli("stop", "tool", "read_file", "--by", "ops");
    expect(stop.code).toBe(0);
    expect(stop.text).toMatch(/enforced by 1 coordinator\(s\)/);
    expect((await toolCall(agent, "read_file")).decision).toMatchObject({
      outcome: "block",
      blockedBy: "hookbus:emergency-stop",
    });
    expect(coordinator.stops()).toMatchObject({ readable: true, list: { size: 2 } });
  });
});
