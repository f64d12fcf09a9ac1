/**
 * `npm run demo` (services/demo.ts) as a process against a private nats-server: it runs to the
 * end, exits 0 and leaves no stream of its namespace behind; with --keep the commands it prints
 * work as printed while it waits, and Ctrl-C (SIGTERM here) cleans up the same way.
 */
import { execSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { ownedBy } from "../../../services/demo/cleanup.js";
import { startChild } from "../../support/child.js";
import { useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const demo = fileURLToPath(new URL("../../../services/demo.ts", import.meta.url));
const nats = useNatsServer();

async function demoStreams(): Promise<string[]> {
  const jsm = await jetstreamManager(await nats.connect());
  const names: string[] = [];
  for await (const name of jsm.streams.names()) if (ownedBy("hookbus-demo", name)) names.push(name);
  return names;
}

describe("npm run demo", () => {
  it("runs the session, the timeline and the replay, exits 0 and removes its namespace", async () => {
    const run = startChild(["--import", "tsx", demo], { NATS_URL: nats.url() });
    expect(await run.exited, run.errors()).toBe(0);
    expect(run.output()).toContain("— the audit timeline, read back from the log —");
    expect(run.output()).toContain("npm run demo -- --keep");
    expect(run.output()).toMatch(/removed namespace hookbus-demo: .*HOOKBUS-DEMO_LOG/);
    expect(await demoStreams()).toEqual([]);
  }, 120_000);

  it("with --keep, prints follow-up commands that work as printed, and cleans up on SIGTERM", async () => {
    const run = startChild(["--import", "tsx", demo, "--keep"], { NATS_URL: nats.url() });
    try {
      await until(() => run.output().includes("Ctrl-C stops them"), 90_000, "the demo waiting");
      const commands = run
        .output()
        .split("\n")
        .filter((line) => /^ {2}(npx hookbus|npm run hookbus --) /.test(line))
        .map((line) => line.trim());
      expect(commands.length).toBe(5);
      const runPrinted = (i: number) =>
        execSync(commands[i]!, { cwd: root, encoding: "utf8", timeout: 60_000 });
      expect(runPrinted(0)).toMatch(/before_tool_call/);
      expect(runPrinted(2)).toContain("tool-policy");
      // Exits 0 only when every record is sealed and intact under the printed key.
      expect(runPrinted(3)).toMatch(/^OK: \d+ record\(s\) of namespace hookbus-demo read/m);
      expect(runPrinted(4)).toContain("tool-policy");
    } finally {
      run.child.kill("SIGTERM");
    }
    expect(await run.exited, run.errors()).toBe(0);
    expect(await demoStreams()).toEqual([]);
  }, 180_000);
});
