/**
 * Which processes the stdio MCP gateway watches (src/adapters/mcp/launcher.ts), read from real
 * processes: shells and package runners are climbed through up to the first process that is
 * neither; a host whose later arguments name npx is still the host; a killed one is gone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { launcherChain, stillRunning } from "../../../src/adapters/mcp/launcher.js";
import { until } from "../../support/wait.js";

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** Spawned, and past its exec (until then /proc shows a copy of this process). */
async function run(command: string, args: string[]): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: "ignore" });
  started.push(child);
  await until(
    () => readFileSync(`/proc/${child.pid}/cmdline`, "utf8").includes(args.at(-1)!) || undefined,
    5000,
    `${command} to start`,
  );
  return child;
}

const idle = "setTimeout(() => {}, 60_000)";

describe.runIf(process.platform === "linux")("the gateway's launchers", () => {
  it("climbs through a shell to the process that started it, and stops there", async () => {
    const shell = await run("sh", ["-c", "sleep 60; exit $?"]);
    const chain = launcherChain(shell.pid);
    expect(chain.map((p) => p.pid)).toEqual([shell.pid, process.pid]);
    expect(chain[0]?.name).toBe("sh");
  });

  it("climbs through npm's runner by its script, not by a later argument", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hookbus-launcher-"));
    const script = join(dir, "npx-cli.js"); // what `npx` runs: node …/npm/bin/npx-cli.js
    writeFileSync(script, `${idle};\n`);
    const runner = await run(process.execPath, [script, "hookbus", "mcp-proxy"]);
    const host = await run(process.execPath, ["-e", idle, "--", "npx", "hookbus", "mcp-proxy"]);
    expect(launcherChain(runner.pid).map((p) => p.pid)).toEqual([runner.pid, process.pid]);
    expect(launcherChain(host.pid).map((p) => p.pid)).toEqual([host.pid]);
  });

  it("a killed process is gone, even before its parent reaps it", async () => {
    const shell = await run("sh", ["-c", "sleep 60; exit $?"]);
    const [watched] = launcherChain(shell.pid);
    expect(stillRunning(watched!)).toBe(true);
    shell.kill("SIGKILL");
    await until(() => !stillRunning(watched!) || undefined, 5000, "the shell to be gone");
  });
});
