/**
 * `npm run demo` (services/demo.ts) as a process against a private nats-server: it runs to the
 * end, exits 0 and leaves no stream of its namespace behind; with --keep the commands it prints
 * work as printed while it waits, and Ctrl-C (SIGTERM here) cleans up the same way. PostgreSQL
 * answers at 127.0.0.1:5432 on machines of this kind (as for every index test), so the demo shows
 * its indexed query and drops the database it made.
 */
import { execSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { jetstreamManager } from "@nats-io/jetstream";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { ownedBy } from "../../../services/demo/cleanup.js";
import { LOCAL_PG_URL } from "../../support/postgres-server.js";
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

/** Whether the database the demo named in its output still exists (on 127.0.0.1:5432). */
async function demoDatabaseLeft(output: string): Promise<boolean> {
  const name = /into database (hookbus_demo_[0-9a-f]{8})/.exec(output)?.[1];
  if (name === undefined) throw new Error("the demo named no index database");
  const client = new pg.Client({ connectionString: LOCAL_PG_URL });
  await client.connect();
  try {
    const r = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    return r.rowCount !== 0;
  } finally {
    await client.end();
  }
}

/** Runs the printed `hookbus ui` line as printed, reads the address it prints and loads the page. */
async function expectUiServes(command: string): Promise<void> {
  // Its own process group: the shell, npm and node are stopped together.
  const child = spawn("sh", ["-c", command], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  try {
    await until(() => /hookbus ui: (http:\S+)\//.test(output), 60_000, "the UI starting").catch(
      (error: unknown) => {
        throw new Error(`${String(error)}; it printed: ${output}`);
      },
    );
    const url = /hookbus ui: (http:\S+)\//.exec(output)![1]!;
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("hookbus");
  } finally {
    process.kill(-child.pid!, "SIGTERM");
  }
}

describe("npm run demo", () => {
  it("runs the session, the timeline and the replay, exits 0 and removes its namespace", async () => {
    const run = startChild(["--import", "tsx", demo], { NATS_URL: nats.url() });
    expect(await run.exited, run.errors()).toBe(0);
    expect(run.output()).toContain("— the audit timeline, read back from the log —");
    expect(run.output()).toContain("npm run demo -- --keep");
    // PostgreSQL answers on machines of this kind (as for every index test): the indexed query.
    expect(run.output()).toMatch(/indexer: \d+ records into database hookbus_demo_[0-9a-f]{8}/);
    expect(run.output()).toMatch(/\d+ records? \(index\)/);
    expect(run.output()).toContain("counts per hook, outcome and policy");
    expect(await demoDatabaseLeft(run.output())).toBe(false);
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
        .filter((line) =>
          /^ {2}(PATH="\$PWD\/\.tools\/bin:\$PATH" )?(npx hookbus|npm run hookbus --) /.test(line),
        )
        .map((line) => line.trim());
      expect(commands.length).toBe(7);
      const runPrinted = (i: number) =>
        execSync(commands[i]!, { cwd: root, encoding: "utf8", timeout: 60_000 });
      expect(runPrinted(0)).toMatch(/before_tool_call/);
      expect(runPrinted(2)).toContain("tool-policy");
      // Exits 0 only when every record is sealed and intact under the printed key.
      expect(runPrinted(3)).toMatch(/^OK: \d+ record\(s\) of namespace hookbus-demo read/m);
      expect(runPrinted(4)).toContain("tool-policy");
      expect(runPrinted(5)).toMatch(/\d+ records? \(index\)/);
      expect(commands[6]).toMatch(/ ui --index /);
      await expectUiServes(commands[6]!);
    } finally {
      run.child.kill("SIGTERM");
    }
    expect(await run.exited, run.errors()).toBe(0);
    expect(await demoStreams()).toEqual([]);
    expect(await demoDatabaseLeft(run.output())).toBe(false);
  }, 180_000);
});
