/**
 * The CLI at its edges: each bad input a user can type gets one coded line that says the fix,
 * the right exit status, and no stack trace; services wait for NATS at start; gates refuse an
 * empty selection. Every case spawns `hookbus` as a user would run it (each start loads the
 * TypeScript sources, seconds on a busy machine: hence the long timeouts).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import { startChild } from "../../support/child.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const examples = (file: string) =>
  fileURLToPath(new URL(`../../../services/policies/${file}`, import.meta.url));
const version = (
  JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;
const dir = mkdtempSync(join(tmpdir(), "hookbus-cli-edges-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** A port nothing listens on: bound by us, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function hookbus(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = startChild([cli, ...args], { HOOKBUS_DEBUG: "", ...env });
  const code = await child.exited;
  return { code, stdout: child.output(), stderr: child.errors() };
}

/** One line on stderr, starting with the code; no stack trace anywhere. */
function expectCoded(run: Run, code: string, exit: number, ...words: string[]): void {
  expect(run.stderr.trim().split("\n"), run.stderr).toHaveLength(1);
  expect(run.stderr.startsWith(`${code}: `), run.stderr).toBe(true);
  expect(`${run.stdout}${run.stderr}`).not.toMatch(/\n\s+at /);
  for (const word of words) expect(run.stderr).toContain(word);
  expect(run.code).toBe(exit);
}

const nats = useNatsServer({ own: true });

describe("hookbus: bad input gets a coded line with the fix", { timeout: 120_000 }, () => {
  it("an unreachable server", async () => {
    const url = `nats://127.0.0.1:${await closedPort()}`;
    const run = await hookbus(["registry", "show", "--server", url]);
    expectCoded(
      run,
      "HOOKBUS_NATS_UNREACHABLE",
      1,
      `cannot reach NATS at ${url} (connection refused)`,
      "start nats-server -js or set --server/NATS_URL",
    );
  });

  it("a mistyped host", async () => {
    const run = await hookbus(["registry", "show", "--server", "nats://no-such-host.invalid:4222"]);
    expectCoded(run, "HOOKBUS_NATS_UNREACHABLE", 1, "(unknown host)", "check the host name");
  });

  it("an invalid URL", async () => {
    const run = await hookbus(["audit", "query", "--server", "nats://[::1"]);
    expectCoded(run, "HOOKBUS_INVALID_ARGUMENT", 1, "invalid NATS URL");
  });

  it("a missing creds file", async () => {
    const run = await hookbus(["registry", "show", "--creds", join(dir, "nope.creds")]);
    expectCoded(run, "HOOKBUS_INVALID_ARGUMENT", 1, "cannot read creds file", "no such file");
  });

  it("a bad --log-level", async () => {
    const run = await hookbus(["coordinator", "--log-level", "verbose"]);
    expectCoded(run, "HOOKBUS_INVALID_ARGUMENT", 1, "--log-level must be one of");
  });

  it("a bad --namespace makes a service exit promptly, even with NATS up", async () => {
    const started = Date.now();
    const run = await hookbus(["coordinator", "--server", nats.url(), "--namespace", "Bad.NS"]);
    expectCoded(run, "HOOKBUS_INVALID_ARGUMENT", 1, 'invalid namespace "Bad.NS"');
    // It used to print the error and never exit; loading the CLI alone takes seconds under load.
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it("an unknown command and an unknown option are usage errors (exit 2)", async () => {
    expectCoded(await hookbus(["frobnicate"]), "HOOKBUS_USAGE", 2, 'unknown command "frobnicate"');
    expectCoded(
      await hookbus(["registry", "show", "--bogus"]),
      "HOOKBUS_USAGE",
      2,
      "'--bogus'",
      "hookbus registry --help",
    );
  });

  it("--debug (or HOOKBUS_DEBUG=1) adds the stack trace; the coded line stays first", async () => {
    const url = `nats://127.0.0.1:${await closedPort()}`;
    for (const run of [
      await hookbus(["registry", "show", "--server", url, "--debug"]),
      await hookbus(["registry", "show", "--server", url], { HOOKBUS_DEBUG: "1" }),
    ]) {
      expect(run.stderr.startsWith("HOOKBUS_NATS_UNREACHABLE: ")).toBe(true);
      expect(run.stderr).toMatch(/\n\s+at /);
      expect(run.code).toBe(1);
    }
  });

  it("--version prints the package version", async () => {
    const run = await hookbus(["--version"]);
    expect(run).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });
});

describe("hookbus: JSON files people write", { timeout: 120_000 }, () => {
  // An unreachable --server proves validate never connects.
  const offline = ["--server", "nats://127.0.0.1:1"];

  it("registry validate checks a file offline", async () => {
    const run = await hookbus([
      "registry",
      "validate",
      examples("registry.example.json"),
      ...offline,
    ]);
    expect(run.stdout).toContain("is valid: 5 policies");
    expect(run.code).toBe(0);
  });

  it("a syntax error names its line and column", async () => {
    const path = file("syntax.json", '{"policies": [\n  {"name": "a" "hooks": []}\n]}');
    const run = await hookbus(["registry", "validate", path, ...offline]);
    expectCoded(run, "HOOKBUS_INVALID_REGISTRY", 1, `${path}:2:16:`, 'expected "," or "}"');
  });

  it("a key given twice is refused, not silently overwritten", async () => {
    const path = file(
      "dup.json",
      '{"policies": [\n  {"name": "a", "hooks": ["before_tool_call"], "priority": 1, "priority": 9}\n]}',
    );
    const run = await hookbus(["registry", "validate", path, ...offline]);
    expectCoded(run, "HOOKBUS_INVALID_REGISTRY", 1, `${path}:2:63:`, 'duplicate key "priority"');
  });

  it("a missing registry file", async () => {
    const run = await hookbus(["registry", "validate", join(dir, "none.json")]);
    expectCoded(run, "HOOKBUS_INVALID_REGISTRY", 1, "no such file");
  });
});

describe("hookbus registry apply and diff on a server", { timeout: 120_000 }, () => {
  it("diff shows what would change; re-applying an identical file keeps the revision", async () => {
    const connection = ["--server", nats.url(), "--namespace", uniqueNamespace("edges")];
    const registry = examples("registry.example.json");
    const before = await hookbus(["registry", "diff", registry, ...connection]);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain("+ tool-policy");

    const first = await hookbus(["registry", "apply", registry, ...connection, "--json"]);
    expect(JSON.parse(first.stdout)).toMatchObject({ revision: 1, changed: true });
    const again = await hookbus(["registry", "apply", registry, ...connection, "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ revision: 1, changed: false });
    const same = await hookbus(["registry", "diff", registry, ...connection]);
    expect(same).toMatchObject({ code: 0 });
    expect(same.stdout).toContain("no change");

    const edited = JSON.parse(readFileSync(registry, "utf8")) as {
      policies: Array<{ name: string; priority: number }>;
    };
    edited.policies[0]!.priority = 7;
    edited.policies.pop();
    const changed = await hookbus([
      "registry",
      "diff",
      file("edited.json", JSON.stringify(edited)),
      ...connection,
      "--json",
    ]);
    expect(changed.code).toBe(1);
    expect(JSON.parse(changed.stdout)).toMatchObject({
      revision: 1,
      same: false,
      policies: [
        { policy: "pii-redactor", change: "removed" },
        { policy: "tool-policy", change: "changed", fields: [{ field: "priority", after: 7 }] },
      ],
    });
  });
});

describe("gates refuse an empty selection unless --allow-empty", { timeout: 120_000 }, () => {
  const candidate = [
    "--policies",
    examples("index.ts"),
    "--registry",
    examples("registry.example.json"),
  ];

  it("replay --fail-on-change", async () => {
    const empty = file("empty.ndjson", "");
    const run = await hookbus(["replay", ...candidate, "--from-file", empty, "--fail-on-change"]);
    expect(run.stderr).toContain("HOOKBUS_EMPTY_SELECTION: ");
    expect(run.code).toBe(1);
    const allowed = await hookbus([
      "replay",
      ...candidate,
      "--from-file",
      empty,
      "--fail-on-change",
      "--allow-empty",
    ]);
    expect(allowed.code).toBe(0);
  });

  it("audit verify of a session that does not exist", async () => {
    const namespace = uniqueNamespace("edges");
    const nc = await nats.connect();
    const coordinator = await startCoordinator({ nc, namespace }); // creates the log stream
    try {
      const args = ["audit", "verify", "--server", nats.url(), "--namespace", namespace];
      const run = await hookbus([...args, "--session", "no-such-session"]);
      expectCoded(run, "HOOKBUS_EMPTY_SELECTION", 1, "--session no-such-session", "--allow-empty");
      const allowed = await hookbus([...args, "--session", "no-such-session", "--allow-empty"]);
      expect(allowed.code).toBe(0);
    } finally {
      await coordinator.stop();
    }
  });
});

describe("output and services", { timeout: 120_000 }, () => {
  it("`… --json | head -1` exits quietly when the reader goes away (EPIPE)", () => {
    const cases = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify({
        name: `case ${i}`,
        hook: "before_tool_call",
        event: { toolName: "read_file", toolCallId: `tc-${i}`, params: { path: "a" } },
        expect: { outcome: "allow" },
      }),
    ).join("\n");
    const fixture = file("many.ndjson", cases);
    const script = `"${process.execPath}" "${cli}" policy test "${fixture}" --policies "${examples("index.ts")}" --registry "${examples("registry.example.json")}" --json 2>"${dir}/epipe.err" | head -1; echo "status=\${PIPESTATUS[0]}"`;
    const result = spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 60_000 });
    const [first, status] = result.stdout.trim().split("\n");
    expect(JSON.parse(first!)).toMatchObject({ name: "case 0", status: "pass" });
    expect(status).toBe("status=0");
    expect(readFileSync(join(dir, "epipe.err"), "utf8")).toBe("");
  });

  it("a coordinator waits for NATS at start, logging each attempt, then serves", async () => {
    const server = nats.handle();
    await server.kill();
    const coordinator = startChild(
      [cli, "coordinator", "--server", server.url, "--namespace", uniqueNamespace("edges")],
      { HOOKBUS_CONNECT_WAIT_MS: "60000" },
    );
    try {
      await until(() => coordinator.output().includes("cannot reach NATS"), 20_000, "a retry log");
      await server.start();
      await until(() => coordinator.output().includes("coordinator ready"), 30_000, "ready");
      coordinator.child.kill("SIGTERM");
      expect(await coordinator.exited).toBe(0);
    } finally {
      if (coordinator.child.exitCode === null) coordinator.child.kill("SIGKILL");
    }
  });

  it("with --connect-wait 0 a service gives up at once, coded, exit 1", async () => {
    const url = `nats://127.0.0.1:${await closedPort()}`;
    const run = await hookbus(["coordinator", "--server", url, "--connect-wait", "0"]);
    expectCoded(run, "HOOKBUS_NATS_UNREACHABLE", 1, "connection refused");
  });
});
