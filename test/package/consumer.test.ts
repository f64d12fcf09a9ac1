/**
 * The package as a user gets it: `npm pack`, installed into fresh projects outside the checkout
 * (one ES module project, one CommonJS), the public API imported from .mjs, .cjs and .ts files,
 * the CLI run through npx, and one call end to end: `hookbus registry apply`, `hookbus worker
 * ./policy.ts` on the project's own policy module, `hookbus coordinator`, and an agent call the
 * policy blocks — also through the fast Claude Code hook from node_modules/.bin — against a
 * private nats-server.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServer, type NatsServerHandle } from "../../src/testing/index.js";
import { stopHookDaemons } from "../support/hook-daemons.js";
import { uniqueNamespace } from "../support/nats.js";
import {
  mustRun,
  npmInstall,
  packCheckout,
  root,
  run,
  startService,
  tempDir,
  userEnv,
} from "./support.js";

const projectFiles = [
  "api.mjs",
  "api.ts",
  "require.cjs",
  "call.mjs",
  "registry.json",
  "policy.mts",
];
const tsconfig = {
  compilerOptions: {
    module: "NodeNext",
    moduleResolution: "NodeNext",
    target: "ES2023",
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  },
  files: ["api.ts", "policy.mts"],
};
const version = (
  JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string }
).version;

/**
 * The fast Claude Code hook as docs/adapters/claude-code.md configures it — the settings' command
 * through a shell, from the project's node_modules/.bin — answering a PreToolUse event through the
 * daemon it starts from the installed package.
 */
function fastClaudeCodeHook(project: string, env: NodeJS.ProcessEnv): unknown {
  const event = {
    session_id: "consumer-session",
    cwd: project,
    hook_event_name: "PreToolUse",
    tool_name: "exec",
    tool_input: { command: "ls" },
  };
  const result = spawnSync(
    "/bin/sh",
    ["-c", '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/hookbus-claude-code-hook --timeout-ms 60000'],
    {
      cwd: project,
      env: {
        ...env,
        CLAUDE_PROJECT_DIR: project,
        HOOKBUS_RUNTIME_DIR: join(project, "hookbus-run"),
      },
      encoding: "utf8",
      input: JSON.stringify(event),
      timeout: 90_000,
    },
  );
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return (JSON.parse(result.stdout) as { hookSpecificOutput?: unknown }).hookSpecificOutput;
}

let packDir: Awaited<ReturnType<typeof tempDir>>;
let tarball: string;
let nats: NatsServerHandle;

beforeAll(async () => {
  packDir = await tempDir("hookbus-pack-");
  tarball = packCheckout(packDir.path);
  nats = await findNatsServer({ own: true });
});

afterAll(async () => {
  await nats?.stop();
  await packDir?.remove();
});

describe.each([
  { kind: "ES module", type: "module" as const },
  { kind: "CommonJS", type: undefined },
])("hookbus installed from its tarball into a $kind project", ({ type }) => {
  let project: Awaited<ReturnType<typeof tempDir>>;
  const cwd = () => project.path;

  beforeAll(async () => {
    project = await tempDir(`hookbus-consumer-${type ?? "cjs"}-`);
    const manifest = { name: "consumer", private: true, version: "1.0.0", ...(type && { type }) };
    await writeFile(join(cwd(), "package.json"), JSON.stringify(manifest, null, 2));
    await writeFile(join(cwd(), "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
    for (const file of projectFiles)
      await copyFile(join(root, "test/package/project", file), join(cwd(), file));
    npmInstall(cwd(), [tarball]);
  });

  afterAll(async () => {
    await project?.remove();
  });

  it("imports the public API and the hookbus/coordinator, /testing, /pi, /privacy and /redact-stream subpaths from .mjs, .cjs and .ts", () => {
    const fromEsm = JSON.parse(mustRun("node", ["api.mjs"], cwd())) as Record<string, unknown>;
    expect(fromEsm).toEqual({
      definePolicy: "function",
      HookbusClient: "function",
      startCoordinator: "function",
      coordinatorInMain: false,
      findNatsServer: "function",
      testingInMain: false,
      piAdapter: "function",
      sealRecord: "function",
      privacyInMain: false,
      StreamRedactor: "function",
      redactStreamInMain: false,
    });
    const fromCjs = JSON.parse(mustRun("node", ["require.cjs"], cwd())) as Record<string, unknown>;
    expect(fromCjs).toEqual({
      definePolicy: "function",
      HookbusClient: "function",
      findNatsServer: "function",
    });
    // tsx is a dependency of hookbus, so the project can run TypeScript with it.
    const fromTs = JSON.parse(mustRun("npx", ["--no-install", "tsx", "api.ts"], cwd())) as {
      policy: string;
    };
    expect(fromTs.policy).toBe("typed");
  });

  it("type-checks against the package's declarations", () => {
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const result = run("node", [tsc, "-p", "tsconfig.json"], cwd());
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("runs the compiled CLI through npx", () => {
    const help = run("npx", ["--no-install", "hookbus", "--help"], cwd());
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: hookbus <command>");
    const printed = mustRun("npx", ["--no-install", "hookbus", "--version"], cwd());
    expect(printed.trim()).toContain(version);
  });

  it("ships the audit UI's assets and the index migrations (hookbus ui reads both)", () => {
    const installed = join(cwd(), "node_modules", "hookbus");
    for (const file of [
      "dist/ui/static/ui.css",
      "dist/ui/static/tail.js",
      "dist/ui/static/replay.js",
    ])
      expect(existsSync(join(installed, file)), file).toBe(true);
    expect(existsSync(join(installed, "migrations", "001_index.sql"))).toBe(true);
    const help = run("npx", ["--no-install", "hookbus", "ui", "--help"], cwd());
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: hookbus ui");
  });

  it("does not pull the example policies' own dependencies (libphonenumber-js, validator)", async () => {
    const installed = JSON.parse(
      await readFile(join(cwd(), "node_modules", "hookbus", "package.json"), "utf8"),
    ) as { dependencies: Record<string, string> };
    for (const name of ["libphonenumber-js", "validator"]) {
      expect(installed.dependencies[name], name).toBeUndefined();
      expect(existsSync(join(cwd(), "node_modules", name)), name).toBe(false);
    }
  });

  it("serves the project's TypeScript policy, and an agent call through a coordinator is blocked by it", async () => {
    const namespace = uniqueNamespace("consumer");
    const env = userEnv({ NATS_URL: nats.url, HOOKBUS_NAMESPACE: namespace });
    // In an ES module project a .ts policy is an ES module; in a CommonJS project it is CommonJS,
    // which hookbus refuses with a coded error that says to use .mts.
    const policyFile = type === "module" ? "policy.ts" : "policy.mts";
    if (type === "module") await copyFile(join(cwd(), "policy.mts"), join(cwd(), "policy.ts"));
    else {
      await copyFile(join(cwd(), "policy.mts"), join(cwd(), "policy.ts"));
      const refused = run("npx", ["--no-install", "hookbus", "worker", "./policy.ts"], cwd(), env);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(/^HOOKBUS_INVALID_POLICY: .*CommonJS.*rename it to \.mts/m);
    }

    expect(
      mustRun("npx", ["--no-install", "hookbus", "registry", "apply", "registry.json"], cwd(), env),
    ).toMatch(/revision 1/);
    const worker = startService(
      "npx",
      ["--no-install", "hookbus", "worker", `./${policyFile}`],
      cwd(),
      env,
    );
    const coordinator = startService("npx", ["--no-install", "hookbus", "coordinator"], cwd(), env);
    try {
      await worker.waitFor("worker ready");
      await coordinator.waitFor("coordinator ready");
      const decision = JSON.parse(mustRun("node", ["call.mjs"], cwd(), env)) as {
        outcome: string;
        blockedBy?: string;
        blockReason?: string;
      };
      expect(decision).toMatchObject({
        outcome: "block",
        blockedBy: "no-exec",
        blockReason: "exec is not allowed",
      });
      expect(fastClaudeCodeHook(cwd(), env)).toEqual({
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "hookbus (no-exec): exec is not allowed",
      });
    } finally {
      stopHookDaemons(join(cwd(), "hookbus-run"));
      // npx itself dies of the signal; the drain on SIGTERM is tested in test/integration/cli.
      await Promise.all([worker.stop(), coordinator.stop()]);
    }
  });
});
