/**
 * `hookbus claude-code-hook` as Claude Code runs it: a process per hook event, the event's JSON
 * on stdin (recorded payloads in Claude Code's documented format), the decision JSON on stdout,
 * against a real coordinator and policy worker. Gates fail closed when NATS is unreachable.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bus, definePolicy, runPolicy, type PolicyRunner } from "../../../src/index.js";
import { readLog } from "../../support/log.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const fixture = (name: string) =>
  readFileSync(
    fileURLToPath(new URL(`../../fixtures/claude-code/${name}`, import.meta.url)),
    "utf8",
  );

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Claude Code's way of running a command hook: spawn, write stdin, read stdout, wait. */
function runHook(stdin: string, args: string[]): Promise<HookRun> {
  const child = spawn(process.execPath, [cli, "claude-code-hook", ...args], {
    env: { ...process.env, HOOKBUS_CLI_SOURCE: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

/** The one JSON line the hook printed, after checking it exited 0 (Claude Code reads JSON only then). */
function answer(
  run: HookRun,
): Record<string, unknown> & { hookSpecificOutput?: Record<string, unknown> } {
  expect(run.stderr, "stderr").toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

const guard = definePolicy({
  name: "claude-guard",
  version: "1.0.0",
  hooks: {
    before_tool_call(event) {
      const command = event.params.command;
      if (event.toolName === "Bash" && typeof command === "string" && command.includes("rm -rf"))
        return { block: true, blockReason: "recursive deletes are not allowed" };
      const path = event.params.file_path;
      if (
        event.toolName === "Write" &&
        typeof path === "string" &&
        !path.startsWith("/home/dev/app/")
      )
        return { params: { ...event.params, file_path: `/home/dev/app/sandbox${path}` } };
      return undefined;
    },
    before_tool_result(event) {
      const text = JSON.stringify(event.result ?? "");
      if (/@/.test(text)) return { content: text.replace(/[\w.+-]+@[\w-]+\.[\w.]+/g, "[email]") };
      return undefined;
    },
    before_agent_reply(event) {
      if (/password/i.test(event.cleanedBody))
        return { reply: { text: "Secrets are not shared here: ask the on-call admin." } };
      return undefined;
    },
    before_response_emit(event) {
      if (/sk-live-/.test(event.content))
        return { block: true, blockReason: "the answer contains a live key" };
      return undefined;
    },
  },
});

const HOOKS = [
  "before_tool_call",
  "before_tool_result",
  "before_agent_reply",
  "before_response_emit",
] as const;

const nats = useNatsServer();
const namespace = uniqueNamespace("claude");
let coordinator: Coordinator;
let worker: PolicyRunner;
let args: string[];

beforeAll(async () => {
  const nc = await nats.connect();
  coordinator = await startCoordinator({ nc, namespace });
  worker = await runPolicy(guard, { nc, namespace });
  await (
    await RegistryStore.open(nc, new Subjects(namespace))
  ).apply({
    policies: [{ name: "claude-guard", hooks: [...HOOKS], priority: 100 }],
  });
  await until(() => coordinator.registry().revision > 0, 10_000, "registry at the coordinator");
  args = [
    "--server",
    nats.url(),
    "--namespace",
    namespace,
    "--agent",
    "dev-laptop",
    "--timeout-ms",
    "60000",
  ];
}, 30_000);

afterAll(async () => {
  await worker?.stop();
  await coordinator?.stop();
});

describe("hookbus claude-code-hook", () => {
  it("denies a blocked Bash call, and records it under the agent and Claude Code's session", async () => {
    const out = answer(await runHook(fixture("pre-tool-use-bash.json"), args));
    expect(out.hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "hookbus (claude-guard): recursive deletes are not allowed",
    });
    const bus = await Bus.open(await nats.connect(), { namespace });
    const records = await readLog(bus);
    const record = records.find((r) => r.hook === "before_tool_call");
    expect(record).toMatchObject({
      context: { agentId: "dev-laptop", sessionKey: "3f0c8a2e-5b1d-4c1e-9a57-2d1f0b6e8c41" },
      decision: { outcome: "block" },
    });
  }, 60_000);

  it("rewrites a Write outside the project into the sandbox (updatedInput), keeping every field", async () => {
    const out = answer(await runHook(fixture("pre-tool-use-write.json"), args));
    expect(out.hookSpecificOutput).toMatchObject({
      permissionDecision: "allow",
      updatedInput: { file_path: "/home/dev/app/sandbox/etc/app.conf", content: "debug=true\n" },
    });
  }, 60_000);

  it("leaves an allowed call to Claude Code's own permissions", async () => {
    expect(answer(await runHook(fixture("pre-tool-use-read.json"), args))).toEqual({});
  }, 60_000);

  it("redacts an MCP tool's output before Claude sees it", async () => {
    const out = answer(await runHook(fixture("post-tool-use-mcp.json"), args));
    const replaced = out.hookSpecificOutput?.updatedMCPToolOutput as string;
    expect(replaced).toContain("[email]");
    expect(replaced).not.toContain("dana.reyes@example.com");
  }, 60_000);

  it("records a built-in tool's result as an after_tool_call observation", async () => {
    expect(answer(await runHook(fixture("post-tool-use-bash.json"), args))).toEqual({});
    const bus = await Bus.open(await nats.connect(), { namespace });
    await until(
      async () => (await readLog(bus)).find((r) => r.hook === "after_tool_call"),
      20_000,
      "the after_tool_call record",
    );
  }, 60_000);

  it("refuses a prompt with the policy's reply shown to the user", async () => {
    expect(answer(await runHook(fixture("user-prompt-submit.json"), args))).toEqual({
      decision: "block",
      reason: "Secrets are not shared here: ask the on-call admin.",
    });
  }, 60_000);

  it("refuses an answer that leaks a key, so Claude continues with the reason", async () => {
    const out = answer(await runHook(fixture("stop.json"), args));
    expect(out.decision).toBe("block");
    expect(out.reason).toContain("the answer contains a live key");
  }, 60_000);

  it("fails closed when NATS is unreachable: the tool call is denied with the error code", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const out = answer(
      await runHook(fixture("pre-tool-use-read.json"), [
        "--server",
        `nats://127.0.0.1:${port}`,
        "--timeout-ms",
        "20000",
      ]),
    );
    expect(out.hookSpecificOutput?.permissionDecision).toBe("deny");
    expect(out.hookSpecificOutput?.permissionDecisionReason).toContain("HOOKBUS_NATS_UNREACHABLE");
  }, 60_000);

  it("fails closed in a namespace where no registry was ever applied", async () => {
    const out = answer(
      await runHook(fixture("pre-tool-use-read.json"), [
        "--server",
        nats.url(),
        "--namespace",
        uniqueNamespace("empty"),
        "--timeout-ms",
        "60000",
      ]),
    );
    expect(out.hookSpecificOutput?.permissionDecisionReason).toContain("HOOKBUS_NO_REGISTRY");
  }, 60_000);

  it("exits 2 (Claude Code's blocking error) on input that is no hook payload", async () => {
    const run = await runHook("{ not json", args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("HOOKBUS_BAD_MESSAGE");
  }, 60_000);
});
