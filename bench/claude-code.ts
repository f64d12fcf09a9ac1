/**
 * `npm run bench:claude-code`: what one Claude Code hook event costs, as the docs configure it
 * (docs/adapters/claude-code.md): Claude Code runs the settings' command through a shell for each
 * event — `"$CLAUDE_PROJECT_DIR"/node_modules/.bin/hookbus-claude-code-hook`, here a project whose
 * node_modules/.bin links to this checkout's bin/claude-code-hook.mjs as npm would — with the
 * event's JSON on stdin, and waits for it to exit. The daemon runs the built dist/ (the script
 * builds first), against a private nats-server, a coordinator and the example policies with
 * registry.example.json. Prints `claude-code: p50_ms=… p99_ms=…` over BENCH_EVENTS events (after
 * the first, which starts the daemon and is reported apart), and the one-shot
 * `hookbus claude-code-hook` for comparison.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect } from "@nats-io/transport-node";
import { startCoordinator } from "../src/coordinator/index.js";
import { runPolicy } from "../src/index.js";
import { RegistryStore } from "../src/registry/store.js";
import type { RegistryDocumentInput } from "../src/registry/document.js";
import { Subjects } from "../src/bus/subjects.js";
import { findNatsServer } from "../src/testing/nats.js";
import { stopHookDaemons } from "../test/support/hook-daemons.js";
import { examplePolicies } from "../services/policies/index.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200);
const SLOW_EVENTS = Number(process.env.BENCH_SLOW_EVENTS ?? 5);
const NAMESPACE = `bench-cc-${randomBytes(4).toString("hex")}`;
/** The example registry's session-budget allows 100 calls per session: a new one every 50. */
const EVENTS_PER_SESSION = 50;
const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

/** The hook command of the docs' settings, verbatim. */
const COMMAND = '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/hookbus-claude-code-hook';

const session = {
  transcript_path: "/home/dev/.claude/projects/-home-dev-app/3f0c8a2e.jsonl",
  cwd: "/home/dev/app",
  permission_mode: "default",
  hook_event_name: "PreToolUse",
};
const payloads = [
  { tool_name: "Bash", tool_input: { command: "rm -rf /" }, blocked: true },
  { tool_name: "Bash", tool_input: { command: "ls -la" }, blocked: false },
  { tool_name: "Read", tool_input: { file_path: "/home/dev/app/README.md" }, blocked: false },
];

/** Event `i`: one of the payloads, in a session of its own every EVENTS_PER_SESSION events. */
function eventText(i: number, run: string): string {
  const { blocked: _, ...event } = payloads[i % payloads.length]!;
  const sessionId = `${run}-${Math.floor(i / EVENTS_PER_SESSION)}`;
  return JSON.stringify({ ...session, session_id: sessionId, ...event, tool_use_id: `toolu_${i}` });
}

interface Run {
  ms: number;
  code: number | null;
  stdout: string;
}

function timed(
  command: string,
  args: string[],
  stdin: string,
  env: NodeJS.ProcessEnv,
): Promise<Run> {
  const started = performance.now();
  const child = spawn(command, args, { env, stdio: ["pipe", "pipe", "inherit"] });
  let stdout = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) =>
    child.once("close", (code) => resolve({ ms: performance.now() - started, code, stdout })),
  );
}

/** Fails the benchmark when an answer is not the decision the example policies make. */
function check(run: Run, blocked: boolean): void {
  const denied = run.code === 0 && run.stdout.includes('"permissionDecision":"deny"');
  if (run.code !== 0 || denied !== blocked)
    throw new Error(`unexpected answer (exit ${run.code}): ${run.stdout}`);
  if (run.stdout.includes("could not decide")) throw new Error(`failed closed: ${run.stdout}`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function measure(
  name: string,
  count: number,
  run: (stdin: string) => Promise<Run>,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const result = await run(eventText(i, name));
    check(result, payloads[i % payloads.length]!.blocked);
    times.push(result.ms);
  }
  return times.sort((a, b) => a - b);
}

/** One event straight to the daemon, in its wire format (src/adapters/claude-code/daemon.ts). */
function daemonRoundTrip(socketPath: string, text: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const header = { v: 1, agentId: "claude-code", rewrite: "allow", timeoutMs: 10_000 };
    socket.on("error", reject);
    socket.once("data", () => resolve(performance.now() - started));
    socket.write(`${JSON.stringify({ ...header, bytes: Buffer.byteLength(text) })}\n${text}`);
  });
}

/** A project where npm installed hookbus: its .bin link to the fast hook. */
function fakeProject(dir: string): void {
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(
    root("bin/claude-code-hook.mjs"),
    join(dir, "node_modules/.bin/hookbus-claude-code-hook"),
  );
}

const server = await findNatsServer();
const nc = await connect({ servers: server.url });
const workers = await connect({ servers: server.url });
const project = mkdtempSync(join(tmpdir(), "hookbus-bench-cc-"));
const runtime = join(project, "run");
mkdirSync(runtime, { mode: 0o700 });
try {
  const registry = JSON.parse(
    readFileSync(root("services/policies/registry.example.json"), "utf8"),
  ) as RegistryDocumentInput;
  await (await RegistryStore.open(nc, new Subjects(NAMESPACE))).apply(registry);
  const coordinator = await startCoordinator({ nc, namespace: NAMESPACE });
  const runner = await runPolicy([...examplePolicies], { nc: workers, namespace: NAMESPACE });
  fakeProject(project);
  const env = {
    ...process.env,
    CLAUDE_PROJECT_DIR: project,
    NATS_URL: server.url,
    HOOKBUS_NAMESPACE: NAMESPACE,
    HOOKBUS_RUNTIME_DIR: runtime,
    HOOKBUS_CLI_SOURCE: "",
  };
  const fast = (stdin: string) => timed("/bin/sh", ["-c", COMMAND], stdin, env);
  const [cold] = await measure("cold", 1, fast);
  // A bare `node -e ''` through the shell after each event: the floor of any Node command hook,
  // under the same load.
  const bare: number[] = [];
  const times = await measure("fast", EVENTS, async (stdin) => {
    const result = await fast(stdin);
    bare.push((await timed("/bin/sh", ["-c", "node -e ''"], "", env)).ms);
    return result;
  });
  bare.sort((a, b) => a - b);
  // Where an event's time goes: starting the command (shell, Node, the client; --help answers
  // without the daemon), and the daemon's answer alone (this process on its socket).
  const start: number[] = [];
  for (let i = 0; i < 20; i++)
    start.push((await timed("/bin/sh", ["-c", `${COMMAND} --help`], "", env)).ms);
  start.sort((a, b) => a - b);
  const socket = join(
    runtime,
    readdirSync(runtime).find((f) => f.endsWith(".sock"))!,
  );
  const daemon: number[] = [];
  for (let i = 0; i < 50; i++) daemon.push(await daemonRoundTrip(socket, eventText(i, "rtt")));
  daemon.sort((a, b) => a - b);
  const slow = await measure("slow", SLOW_EVENTS, (stdin) =>
    timed(process.execPath, [root("bin/hookbus.js"), "claude-code-hook"], stdin, env),
  );
  console.log(
    `claude-code: p50_ms=${percentile(times, 50).toFixed(0)} p99_ms=${percentile(times, 99).toFixed(0)}`,
  );
  console.log(
    `  events=${EVENTS} first_event_ms=${cold!.toFixed(0)} (starts the daemon)` +
      ` one_shot_claude_code_hook_p50_ms=${percentile(slow, 50).toFixed(0)} (n=${SLOW_EVENTS})` +
      ` bare_node_through_sh_p50_ms=${percentile(bare, 50).toFixed(0)}` +
      ` command_start_p50_ms=${percentile(start, 50).toFixed(0)}` +
      ` daemon_answer_p50_ms=${percentile(daemon, 50).toFixed(1)}`,
  );
  stopHookDaemons(runtime);
  await runner.stop();
  await coordinator.stop();
} finally {
  await workers.drain();
  await nc.drain();
  await server.stop();
  rmSync(project, { recursive: true, force: true });
}
