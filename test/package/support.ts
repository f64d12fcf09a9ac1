/**
 * Helpers for the package tests: pack the checkout once, install into a temporary project, run
 * commands there with an environment that does not leak the checkout's own settings.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { until } from "../support/wait.js";

export const root = fileURLToPath(new URL("../../", import.meta.url));

/** Install commands get this long: a cold npm cache downloads the dependencies. */
const INSTALL_TIMEOUT_MS = 240_000;
const COMMAND_TIMEOUT_MS = 60_000;

/**
 * The environment of a user's shell: no HOOKBUS_CLI_SOURCE (which makes bin/hookbus.js run the
 * checkout's sources), no npm_* variables from the `npm test` that started vitest.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === "HOOKBUS_CLI_SOURCE" || key === "NATS_URL" || key.startsWith("npm_")) continue;
    if (key === "INIT_CWD" || key === "NODE_OPTIONS" || key.startsWith("VITEST")) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Run a command to completion (bounded), in `cwd`. */
export function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = userEnv(),
  timeout = COMMAND_TIMEOUT_MS,
): RunResult {
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8", timeout });
  if (result.error !== undefined) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Like run(), failing with the command's output when it exits non-zero. */
export function mustRun(
  command: string,
  args: string[],
  cwd: string,
  env?: NodeJS.ProcessEnv,
  timeout?: number,
): string {
  const result = run(command, args, cwd, env, timeout);
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} exited ${result.status} in ${cwd}\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** `npm pack` of the checkout (prepack builds dist/); resolves with the tarball's path. */
export function packCheckout(destination: string): string {
  const out = mustRun(
    "npm",
    ["pack", "--silent", "--pack-destination", destination],
    root,
    userEnv(),
    INSTALL_TIMEOUT_MS,
  );
  const name = out.trim().split("\n").pop()!;
  return join(destination, name);
}

/** `npm install <args>` in `cwd`, preferring the local npm cache. */
export function npmInstall(cwd: string, args: string[]): void {
  mustRun(
    "npm",
    ["install", "--prefer-offline", "--no-audit", "--no-fund", ...args],
    cwd,
    userEnv(),
    INSTALL_TIMEOUT_MS,
  );
}

export async function tempDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export interface Service {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first output line containing `text`. */
  waitFor(text: string, timeoutMs?: number): Promise<string>;
  /** SIGTERM to its process group (npx runs the bin as a child), resolving with the exit code. */
  stop(): Promise<number | null>;
}

/** A long-running command in its own process group, so stop() reaches what npx started. */
export function startService(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Service {
  const child = spawn(command, args, {
    cwd,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  return {
    child,
    output: () => output,
    waitFor: (text, timeoutMs = 30_000) =>
      until(
        () => {
          if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited:\n${output}`);
          return output.split("\n").find((line) => line.includes(text));
        },
        timeoutMs,
        `"${text}" from ${command} ${args.join(" ")}`,
      ),
    async stop() {
      if (child.exitCode === null && child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGTERM");
        } catch {
          // already gone
        }
      }
      return exited;
    },
  };
}
