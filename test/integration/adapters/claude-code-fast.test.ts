/**
 * The fast Claude Code hook (bin/claude-code-hook.mjs) as Claude Code runs it — a process per
 * event, the event's JSON on stdin — talking to the `hookbus claude-code-daemon` it starts, against
 * a real NATS server, coordinator and the example policies. It answers as `hookbus
 * claude-code-hook` does, and closed whenever the daemon cannot answer.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { examplePolicies } from "../../../services/policies/index.js";
import { definePolicy } from "../../../src/index.js";
import type { RegistryDocumentInput } from "../../../src/registry/document.js";
import { hookDaemonPids, isAlive, stopHookDaemons } from "../../support/hook-daemons.js";
import { gate } from "../../support/wait.js";
import {
  startPipeline,
  startWorker,
  until,
  useNatsServer,
  useWorkers,
} from "../policies/harness.js";

const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const fastHook = root("bin/claude-code-hook.mjs");
const slowHook = root("bin/hookbus.js");
const fixture = (name: string) => readFileSync(root(`test/fixtures/claude-code/${name}`), "utf8");
const registry = JSON.parse(
  readFileSync(root("services/policies/registry.example.json"), "utf8"),
) as RegistryDocumentInput;

const nats = useNatsServer();
useWorkers();

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

type Answer = Record<string, unknown> & { hookSpecificOutput?: Record<string, unknown> };

/** Runs a hook command as Claude Code does: spawn, write stdin, read stdout, wait for the exit. */
function run(
  command: string[],
  stdin: string | Buffer,
  env: NodeJS.ProcessEnv = {},
): Promise<HookRun> {
  const child = spawn(process.execPath, command, {
    env: { ...process.env, HOOKBUS_CLI_SOURCE: "1", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.on("error", () => {}); // a client that refuses oversized input stops reading
  child.stdin.end(stdin);
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

function answer(result: HookRun): Answer {
  expect(result.stderr, "stderr").toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Answer;
}

/** Each test's own runtime folder (its daemons, sockets and logs), removed afterwards. */
const dirs: string[] = [];
function runtimeDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hookbus-cc-"));
  chmodSync(dir, 0o700);
  dirs.push(dir);
  return dir;
}

function sockets(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith(".sock"));
}

afterEach(() => {
  for (const dir of dirs.splice(0)) {
    stopHookDaemons(dir);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A coordinator and the example policies in a namespace of their own; the hook's flags for it. */
async function examplePipeline(): Promise<string[]> {
  const pipeline = await startPipeline(nats.url(), { registry });
  await startWorker(nats.url(), pipeline.namespace, [...examplePolicies]);
  return ["--server", nats.url(), "--namespace", pipeline.namespace, "--agent", "dev-laptop"];
}

/** For the runs that never reach a decision. */
const serverOnly = () => ["--server", nats.url()];

const rmPayload = fixture("pre-tool-use-bash.json").replace(
  /"command":\s*"[^"]*"/,
  '"command": "rm -rf /"',
);

describe("the fast Claude Code hook", () => {
  it("blocks Bash rm -rf / with the example registry exactly as the slow hook does, from one daemon", async () => {
    const env = { HOOKBUS_RUNTIME_DIR: runtimeDir() };
    const hookArgs = [...(await examplePipeline()), "--timeout-ms", "60000"];
    const fast = await run([fastHook, ...hookArgs], rmPayload, env);
    const slow = await run([slowHook, "claude-code-hook", ...hookArgs], rmPayload);
    expect(answer(fast).hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason:
        "hookbus (tool-policy): destructive or remote-code shell commands are not allowed",
    });
    expect(fast).toEqual(slow);
    // The daemon stays: the next events reuse it and its connection.
    const read = answer(await run([fastHook, ...hookArgs], fixture("pre-tool-use-read.json"), env));
    expect(read).toEqual({});
    const again = await run([fastHook, ...hookArgs], rmPayload, env);
    expect(again).toEqual(slow);
    expect(hookDaemonPids(env.HOOKBUS_RUNTIME_DIR)).toHaveLength(1);
  }, 120_000);

  it("fails closed when the daemon cannot start", async () => {
    const dir = runtimeDir();
    // The daemon refuses a bad log level at start; the client does not read it.
    const result = await run([fastHook, ...serverOnly()], rmPayload, {
      HOOKBUS_RUNTIME_DIR: dir,
      LOG_LEVEL: "loud",
    });
    const reason = String(answer(result).hookSpecificOutput?.permissionDecisionReason);
    expect(reason).toMatch(
      /^hookbus could not decide \(HOOKBUS_DAEMON_UNAVAILABLE\): the hook daemon exited/,
    );
    expect(reason).toContain("(fail closed)");
  }, 60_000);

  it("fails closed when the daemon is killed mid-request, and when its socket is stale", async () => {
    const held = gate();
    const arrived = { n: 0 };
    const hold = definePolicy({
      name: "hold",
      hooks: {
        async before_tool_call() {
          arrived.n++;
          await held.promise;
          return undefined;
        },
      },
    });
    const pipeline = await startPipeline(nats.url(), {
      registry: {
        policies: [{ name: "hold", hooks: ["before_tool_call"], priority: 1, timeoutMs: 60_000 }],
      },
      policies: [hold],
    });
    const env = { HOOKBUS_RUNTIME_DIR: runtimeDir() };
    const holdArgs = [
      "--server",
      nats.url(),
      "--namespace",
      pipeline.namespace,
      "--timeout-ms",
      "60000",
    ];
    try {
      const pending = run([fastHook, ...holdArgs], rmPayload, env);
      await until(() => arrived.n === 1, 30_000, "the call at the policy");
      const [pid] = hookDaemonPids(env.HOOKBUS_RUNTIME_DIR);
      const killedAt = Date.now();
      process.kill(pid!, "SIGKILL");
      const killed = answer(await pending);
      expect(Date.now() - killedAt).toBeLessThan(10_000); // not the 60 s deadline
      expect(killed.hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
      expect(String(killed.hookSpecificOutput?.permissionDecisionReason)).toContain(
        "HOOKBUS_DAEMON_UNAVAILABLE): the hook daemon closed the connection without answering",
      );

      // The killed daemon left its socket behind: stale. A daemon that cannot start: closed.
      expect(sockets(env.HOOKBUS_RUNTIME_DIR)).toHaveLength(1);
      const stale = answer(
        await run([fastHook, ...holdArgs], rmPayload, { ...env, LOG_LEVEL: "loud" }),
      );
      expect(String(stale.hookSpecificOutput?.permissionDecisionReason)).toContain(
        "HOOKBUS_DAEMON_UNAVAILABLE",
      );
      // A daemon that can start replaces the stale socket and answers (the policy allows now).
      held.open();
      expect(answer(await run([fastHook, ...holdArgs], rmPayload, env))).toEqual({});
      expect(hookDaemonPids(env.HOOKBUS_RUNTIME_DIR)).toHaveLength(2);
    } finally {
      held.open();
    }
  }, 120_000);

  it("refuses a socket folder open to other users", async () => {
    const dir = runtimeDir();
    chmodSync(dir, 0o777);
    const result = answer(
      await run([fastHook, ...serverOnly()], rmPayload, { HOOKBUS_RUNTIME_DIR: dir }),
    );
    expect(String(result.hookSpecificOutput?.permissionDecisionReason)).toContain(
      "HOOKBUS_DAEMON_SOCKET_UNSAFE",
    );
    expect(readdirSync(dir)).toEqual([]); // no daemon was started there
  }, 60_000);

  it("exits 2 on oversized input, and on input that is no hook payload", async () => {
    const dir = runtimeDir();
    const huge = Buffer.alloc(16 * 1024 * 1024 + 1, 0x20);
    const oversized = await run([fastHook, ...serverOnly()], huge, { HOOKBUS_RUNTIME_DIR: dir });
    expect(oversized.code).toBe(2);
    expect(oversized.stdout).toBe("");
    expect(oversized.stderr).toMatch(/^HOOKBUS_LIMIT_EXCEEDED: /);
    const garbage = await run([fastHook, ...serverOnly(), "--timeout-ms", "60000"], "{ not json", {
      HOOKBUS_RUNTIME_DIR: dir,
    });
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toMatch(/^HOOKBUS_BAD_MESSAGE: /);
  }, 60_000);

  it("the daemon exits after its idle time, removing its socket", async () => {
    const dir = runtimeDir();
    const env = { HOOKBUS_RUNTIME_DIR: dir, HOOKBUS_CLAUDE_CODE_IDLE_EXIT_MS: "1000" };
    // No registry in the default namespace: answered closed, by the daemon.
    answer(await run([fastHook, ...serverOnly(), "--timeout-ms", "60000"], rmPayload, env));
    const [pid] = hookDaemonPids(dir);
    expect(isAlive(pid!)).toBe(true);
    await until(() => !isAlive(pid!) && sockets(dir).length === 0, 20_000, "the idle exit");
    expect(
      readFileSync(
        join(
          dir,
          readdirSync(dir).find((f) => f.endsWith(".log"))!,
        ),
        "utf8",
      ),
    ).toContain('"reason":"idle"');
  }, 60_000);

  it("the daemon stops cleanly on SIGTERM", async () => {
    const dir = runtimeDir();
    const env = { HOOKBUS_RUNTIME_DIR: dir };
    answer(await run([fastHook, ...serverOnly(), "--timeout-ms", "60000"], rmPayload, env));
    const [pid] = hookDaemonPids(dir);
    process.kill(pid!, "SIGTERM");
    await until(() => !isAlive(pid!) && sockets(dir).length === 0, 20_000, "the exit on SIGTERM");
    expect(existsSync(dir)).toBe(true);
  }, 60_000);
});
