/**
 * `hookbus replay` through the CLI entry point (`main`), as a reviewer or a CI job runs it: on
 * the checked-in export and on a live log, text and --json output, --fail-on-change, and the
 * exit codes of bad input (1, coded) and bad usage (2).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { findNatsServer, type NatsServerHandle } from "../../../src/testing/index.js";

import { startLiveDeployment, type LiveDeployment } from "../../fixtures/live.js";
import { EXPORT_FILE, policyFile, REGISTRY_FILE } from "../../fixtures/replay-helpers.js";
import { SESSIONS } from "../../fixtures/sessions.js";
import { type ReplayResult } from "../../../src/replay/types.js";
import { type ReplaySummary } from "../../../src/replay/summary.js";

const RECORDED = policyFile("index");
const STRICT = [
  "secrets",
  "taint",
  "budget",
  "greeter",
  "tool-filter",
  "pii-shadow",
  "shell-guard-strict",
]
  .map(policyFile)
  .join(",");

async function run(argv: string[]): Promise<{ code: number; stdout: string[]; stderr: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const out: Output = { print: (l) => stdout.push(l), error: (l) => stderr.push(l) };
  const code = await main(["replay", ...argv], out);
  return { code, stdout, stderr: stderr.join("\n") };
}

function parseJson(stdout: string[]): { results: ReplayResult[]; summary: ReplaySummary } {
  const objects = stdout.map((line) => JSON.parse(line) as Record<string, unknown>);
  const last = objects.pop() as { summary: ReplaySummary };
  return { results: objects as unknown as ReplayResult[], summary: last.summary };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hookbus-replay-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("hookbus replay --from-file", () => {
  it("prints the summary and exits 0 with --fail-on-change when nothing changed", async () => {
    const { code, stdout, stderr } = await run([
      "--policies",
      RECORDED,
      "--registry",
      REGISTRY_FILE,
      "--from-file",
      EXPORT_FILE,
      "--fail-on-change",
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.join("\n")).toContain("replayed 48 decision records from 3 sessions: 0 changed");
  });

  it("prints one line per changed record and the tables, and exits 1 with --fail-on-change", async () => {
    const { code, stdout } = await run([
      "--policies",
      STRICT,
      "--registry",
      REGISTRY_FILE,
      "--from-file",
      EXPORT_FILE,
      "--fail-on-change",
    ]);
    expect(code).toBe(1);
    const text = stdout.join("\n");
    expect(stdout.filter((l) => l.startsWith("changed"))).toEqual([
      "changed  #22 ops-bot/ops-1 ops-1.t1.tool.tc-df  before_tool_call exec: allow → block by `shell-guard`",
      "changed  #42 ops-bot/ops-1 ops-1.t3.tool.tc-ls  before_tool_call exec: allow → block by `shell-guard`  [counterfactual]",
    ]);
    expect(text).toContain("2 changed (in 1 session), 46 unchanged");
    expect(text).toMatch(/before_tool_call\s+8\s+2/);
    expect(text).toMatch(/changed by policy\s+records\nshell-guard\s+2/);
    expect(text).toMatch(/kind of change\s+records\nallow→block\s+2/);
  });

  it("without --fail-on-change, exits 0 even when decisions changed", async () => {
    const { code } = await run([
      "--policies",
      STRICT,
      "--registry",
      REGISTRY_FILE,
      "--from-file",
      EXPORT_FILE,
    ]);
    expect(code).toBe(0);
  });

  it("--json prints every result on its own line, then the summary", async () => {
    const { code, stdout } = await run([
      "--policies",
      STRICT,
      "--registry",
      REGISTRY_FILE,
      "--from-file",
      EXPORT_FILE,
      "--json",
      "--fail-on-change",
    ]);
    expect(code).toBe(1);
    const { results, summary } = parseJson(stdout);
    expect(results).toHaveLength(48);
    expect(results.filter((r) => r.status === "changed").map((r) => r.callId)).toEqual([
      "ops-1.t1.tool.tc-df",
      "ops-1.t3.tool.tc-ls",
    ]);
    expect(summary).toMatchObject({ records: 48, changed: 2, byPolicy: { "shell-guard": 2 } });
  });

  it("--verbose prints unchanged records too", async () => {
    const { stdout } = await run([
      "--policies",
      RECORDED,
      "--registry",
      REGISTRY_FILE,
      "--from-file",
      EXPORT_FILE,
      "--verbose",
    ]);
    expect(stdout.filter((l) => l.startsWith("same "))).toHaveLength(48);
    expect(stdout).toContain(
      "same     #8 support-bot/conv-web conv-web.t1.tool.tc-email  before_tool_call email_send: block by `taint`",
    );
  });

  it("notes a loaded policy that the registry does not name", async () => {
    const registry = join(dir, "no-shadow.json");
    const document = JSON.parse(await readFile(REGISTRY_FILE, "utf8")) as {
      policies: { name: string }[];
    };
    document.policies = document.policies.filter((p) => p.name !== "pii-shadow");
    await writeFile(registry, JSON.stringify(document));
    const { code, stderr } = await run([
      "--policies",
      RECORDED,
      "--registry",
      registry,
      "--from-file",
      EXPORT_FILE,
    ]);
    expect(code).toBe(0);
    expect(stderr).toMatch(
      /^note: policy "pii-shadow" \(.*policies\/index\.ts\) is not in the registry: unused$/,
    );
  });
});

describe("hookbus replay: bad input exits 1 with a code, bad usage exits 2", () => {
  it("refuses a registry policy with no loaded module", async () => {
    const { code, stderr } = await run([
      "--policies",
      policyFile("secrets"),
      "--registry",
      REGISTRY_FILE,
      "--from-file",
      EXPORT_FILE,
    ]);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^HOOKBUS_INVALID_POLICY: the registry names policies with no loaded module: "greeter", "tool-filter"/,
    );
  });

  it.each([
    [
      "a missing policy module",
      [
        "--policies",
        "./no/such/policy.ts",
        "--registry",
        REGISTRY_FILE,
        "--from-file",
        EXPORT_FILE,
      ],
      "HOOKBUS_INVALID_POLICY",
    ],
    [
      "a missing export file",
      ["--policies", RECORDED, "--registry", REGISTRY_FILE, "--from-file", "/no/such.ndjson"],
      "HOOKBUS_INVALID_ARGUMENT",
    ],
    [
      "a missing registry file",
      ["--policies", RECORDED, "--registry", "/no/such.json", "--from-file", EXPORT_FILE],
      "HOOKBUS_INVALID_REGISTRY",
    ],
    [
      "a bad --since",
      [
        "--policies",
        RECORDED,
        "--registry",
        REGISTRY_FILE,
        "--agent",
        "a",
        "--since",
        "last tuesday",
      ],
      "HOOKBUS_INVALID_ARGUMENT",
    ],
  ])("%s", async (_what, argv, errorCode) => {
    const { code, stderr } = await run(argv);
    expect(code).toBe(1);
    expect(stderr.startsWith(`${errorCode}: `)).toBe(true);
  });

  it("names the bad line of an export file", async () => {
    const path = join(dir, "bad.ndjson");
    await writeFile(path, '{"record":{"kind":"decision"}}\n');
    const { code, stderr } = await run([
      "--policies",
      RECORDED,
      "--registry",
      REGISTRY_FILE,
      "--from-file",
      path,
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain(`HOOKBUS_BAD_MESSAGE: ${path}:1: not a log entry`);
  });

  it.each([
    ["no selection", ["--policies", RECORDED, "--registry", REGISTRY_FILE]],
    ["no --policies", ["--registry", REGISTRY_FILE, "--from-file", EXPORT_FILE]],
    ["no --registry", ["--policies", RECORDED, "--from-file", EXPORT_FILE]],
    [
      "a file and a session",
      [
        "--policies",
        RECORDED,
        "--registry",
        REGISTRY_FILE,
        "--from-file",
        EXPORT_FILE,
        "--session",
        "s",
      ],
    ],
    [
      "an unknown option",
      ["--policies", RECORDED, "--registry", REGISTRY_FILE, "--from-file", EXPORT_FILE, "--dry"],
    ],
    [
      "a stray argument",
      ["now", "--policies", RECORDED, "--registry", REGISTRY_FILE, "--from-file", EXPORT_FILE],
    ],
  ])("%s", async (_what, argv) => {
    const { code, stderr } = await run(argv);
    expect(code).toBe(2);
    expect(stderr).not.toBe("");
  });

  it("--help prints the usage and exits 0", async () => {
    const { code, stdout } = await run(["--help"]);
    expect(code).toBe(0);
    expect(stdout.join("\n")).toContain("--fail-on-change");
  });
});

describe("hookbus replay on a live log", () => {
  let server: NatsServerHandle;
  let live: LiveDeployment;
  let between: string;

  beforeAll(async () => {
    server = await findNatsServer();
    live = await startLiveDeployment(server.url, `replay-cli-${randomBytes(4).toString("hex")}`);
    await live.run(SESSIONS[0]!); // support-bot conv-web
    await live.run(SESSIONS[1]!); // ops-bot ops-1
    // Legit sleeps: time passing is the point (`between` falls strictly between the sessions).
    await new Promise((r) => setTimeout(r, 50));
    between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 50));
    await live.run(SESSIONS[2]!); // support-bot conv-help
  }, 60_000);

  afterAll(async () => {
    await live?.stop();
    await server?.stop();
  });

  const connection = () => ["--server", server.url, "--namespace", live.namespace];

  it("--session replays that session from the log and gates on the change", async () => {
    const { code, stdout } = await run([
      ...connection(),
      "--policies",
      STRICT,
      "--registry",
      REGISTRY_FILE,
      "--session",
      "ops-1",
      "--json",
      "--fail-on-change",
    ]);
    expect(code).toBe(1);
    const { results, summary } = parseJson(stdout);
    expect(new Set(results.map((r) => r.sessionKey))).toEqual(new Set(["ops-1"]));
    expect(results.filter((r) => r.status === "changed").map((r) => r.callId)).toEqual([
      "ops-1.t1.tool.tc-df",
      "ops-1.t3.tool.tc-ls",
    ]);
    expect(summary).toMatchObject({ sessions: 1, changed: 2 });
  });

  it("--agent with --since replays only that agent's later sessions", async () => {
    const { code, stdout } = await run([
      ...connection(),
      "--policies",
      STRICT,
      "--registry",
      REGISTRY_FILE,
      "--agent",
      "support-bot",
      "--since",
      between,
      "--json",
      "--fail-on-change",
    ]);
    expect(code).toBe(0);
    const { results } = parseJson(stdout);
    expect(results.length).toBeGreaterThan(0);
    expect(new Set(results.map((r) => `${r.agentId}/${r.sessionKey}`))).toEqual(
      new Set(["support-bot/conv-help"]),
    );
  });

  it("replays what `hookbus audit query --json` exported", async () => {
    const exported: string[] = [];
    const audit = await main(["audit", "query", ...connection(), "--session", "ops-1", "--json"], {
      print: (line) => exported.push(line),
      error: () => {},
    });
    expect(audit).toBe(0);
    const file = join(dir, "ops-1.ndjson");
    await writeFile(file, `${exported.join("\n")}\n`);
    const { code, stdout } = await run([
      "--policies",
      STRICT,
      "--registry",
      REGISTRY_FILE,
      "--from-file",
      file,
      "--json",
    ]);
    expect(code).toBe(0);
    const { results } = parseJson(stdout);
    expect(results.filter((r) => r.status === "changed").map((r) => r.callId)).toEqual([
      "ops-1.t1.tool.tc-df",
      "ops-1.t3.tool.tc-ls",
    ]);
  });

  it("fails with HOOKBUS_LOG_UNAVAILABLE in a namespace with no log", async () => {
    const { code, stderr } = await run([
      "--server",
      server.url,
      "--namespace",
      "nothing-here",
      "--policies",
      RECORDED,
      "--registry",
      REGISTRY_FILE,
      "--session",
      "s",
    ]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^HOOKBUS_LOG_UNAVAILABLE: /);
  });
});
