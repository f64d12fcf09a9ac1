/**
 * Issue 33.1 / 35.2: `hookbus registry apply` of a Cedar set that takes the coordinator seconds
 * to load reports enforcement, not "no live coordinator": the coordinator (a real process, whose
 * event loop the load holds) answered before the change, so its silence is waited out up to
 * --wait-ms. A wait shorter than the load names it as not (yet) enforcing, exit 1.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { discover } from "../../../src/observability/discovery.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const nats = useNatsServer();
const dir = mkdtempSync(join(tmpdir(), "hookbus-slow-load-"));
const processes: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(
    processes.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exitCode !== null || p.signalCode !== null) return resolve();
          p.once("exit", () => resolve());
          p.kill("SIGKILL");
        }),
    ),
  );
});

/** A set of `rules` distinct rules: parsing and type-checking it takes the engine seconds. */
function largeSet(rules: number, salt: string): string {
  return Array.from(
    { length: rules },
    (_, i) =>
      `@id("r${i}") @reason("no tool_${salt}_${i}")\nforbid (principal, action == Action::"before_tool_call", resource is Tool) when { resource.name == "tool_${salt}_${i}" };`,
  ).join("\n");
}

function registryFile(name: string, cedar: string): string {
  const file = join(dir, `${name}.json`);
  const policies = [
    { name: "big", kind: "cedar", cedar, hooks: ["before_tool_call"], priority: 1 },
  ];
  writeFileSync(file, JSON.stringify({ policies }));
  return file;
}

async function runCli(namespace: string, ...args: string[]) {
  const lines: string[] = [];
  const out: Output = { print: (l) => lines.push(l), error: (l) => lines.push(l) };
  const code = await main([...args, "--server", nats.url(), "--namespace", namespace], out);
  return { code, text: lines.join("\n") };
}

async function startCoordinatorProcess(namespace: string, id: string) {
  const child = spawn(
    process.execPath,
    [cli, "coordinator", "--server", nats.url(), "--namespace", namespace, "--id", id],
    { env: { ...process.env, HOOKBUS_CLI_SOURCE: "1", LOG_LEVEL: "warn" }, stdio: "inherit" },
  );
  processes.push(child);
  const nc = await nats.connect();
  await until(
    async () =>
      (await discover(nc, namespace, { role: "coordinator", maxWaitMs: 500 })).replies.length > 0,
    60_000,
    "the coordinator process to answer discovery",
  );
  await nc.close();
}

describe("registry apply of a slow-loading Cedar set", () => {
  it("waits for the loading coordinator and reports enforcement; a shorter wait names it", async () => {
    const namespace = uniqueNamespace("slow-load");
    const nc = await nats.connect();
    await (await RegistryStore.open(nc, new Subjects(namespace))).apply({ policies: [] });
    await nc.close();
    await startCoordinatorProcess(namespace, "busy");

    const applied = await runCli(
      namespace,
      "registry",
      "apply",
      registryFile("first", largeSet(600, "a")),
      "--wait-ms",
      "60000",
    );
    expect(applied.text).toMatch(/enforced by 1 coordinator\(s\) in \d+ ms/);
    expect(applied.code).toBe(0);
    const ms = Number(/in (\d+) ms/.exec(applied.text)?.[1]);
    console.log(`apply of a 600-rule Cedar set confirmed after ${ms} ms`);
    // The load held the coordinator past one discovery round (500 ms): what was reported as
    // "no live coordinator answered" before.
    expect(ms).toBeGreaterThan(500);
    const status = await runCli(namespace, "status");
    expect(status.text).toMatch(/big {2}\[enforce\] {2}Cedar set sha256:\S+ {2}loaded in 1 of 1/);

    const short = await runCli(
      namespace,
      "registry",
      "apply",
      registryFile("second", largeSet(600, "b")),
      "--wait-ms",
      "200",
    );
    expect(short.code).toBe(1);
    expect(short.text).toMatch(
      // Loading runs in a worker thread, so the coordinator may answer meanwhile, still on revision 2.
      /NOT ENFORCED after \d+ ms by 1 of 1 coordinator\(s\): busy \(revision 2, (no answer since the change: still loading it, or stopped|still enforcing it: the change is loading, or failed to load \(hookbus status says which\))\)/,
    );
  }, 120_000);

  it("no responders is no coordinator; a listener that never answers is not confirmed", async () => {
    const namespace = uniqueNamespace("silent");
    const file = registryFile("small", "forbid (principal, action, resource) when { false };");
    const none = await runCli(namespace, "registry", "apply", file, "--wait-ms", "2000");
    expect(none.text).toContain("no live coordinator: the revision is enforced when one starts");
    expect(none.code).toBe(0);

    const nc = await nats.connect();
    nc.subscribe(`${namespace}.discover.coordinator`); // subscribed, never answers
    await nc.flush();
    const silent = await runCli(
      namespace,
      "registry",
      "apply",
      registryFile("small-2", "forbid (principal, action, resource) when { 1 == 2 };"),
      "--wait-ms",
      "700",
    );
    await nc.close();
    expect(silent.text).toMatch(/NOT CONFIRMED after \d+ ms: something listens for coordinators/);
    expect(silent.code).toBe(1);
  }, 60_000);
});
