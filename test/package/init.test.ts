/**
 * The five-minute start, as a new user types it, for every framework: `npx hookbus init
 * --framework F` in an empty folder (hookbus fetched as the packed tarball, which is not on the
 * npm registry), then every step it prints, word for word, in order: the install line (from the
 * same tarball), the registry, the policies' own tests, the worker and the coordinator (the lines
 * ending in `&`, started as services), the framework's `npm run try`, and the audit query, which
 * must show the shipped no-shell policy's block. NATS is the test's own server (NATS_URL), so
 * init prints that nothing needs starting. The documents it points at must exist once installed.
 */
import { readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServer, type NatsServerHandle } from "../../src/testing/index.js";
import { uniqueNamespace } from "../support/nats.js";
import {
  mustRun,
  packCheckout,
  run,
  startService,
  tempDir,
  userEnv,
  type Service,
} from "./support.js";

let packDir: Awaited<ReturnType<typeof tempDir>>;
let tarball: string;
let nats: NatsServerHandle;

beforeAll(async () => {
  packDir = await tempDir("hookbus-pack-init-");
  tarball = packCheckout(packDir.path);
  nats = await findNatsServer({ own: true });
});

afterAll(async () => {
  await nats?.stop();
  await packDir?.remove();
});

const INSTALL_MS = 300_000;

function init(cwd: string, framework: string, env: NodeJS.ProcessEnv): string {
  return mustRun(
    "npm",
    ["exec", "--yes", "--package", tarball, "--", "hookbus", "init", "--framework", framework],
    cwd,
    env,
    240_000,
  );
}

/** The printed `next` block: the commands as a user would copy them, comments dropped. */
function printedSteps(output: string): string[] {
  const block = output.split("\nnext")[1]!.split("\n\n")[0]!.split("\n").slice(1);
  return block.map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
}

/** Runs the printed steps in order, as a shell would; `&` lines become services. */
async function runSteps(steps: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const services: Service[] = [];
  const outputs: string[] = [];
  try {
    for (const step of steps) {
      const command = step.replace(/\s+#\s.*$/, "");
      if (command.startsWith("cd ")) {
        expect(command.slice(3)).toBe(cwd);
        continue;
      }
      if (command.endsWith("&")) {
        const service = startService("sh", ["-c", command.slice(0, -1)], cwd, env);
        services.push(service);
        await service.waitFor(" ready", 60_000);
        continue;
      }
      const done = run("sh", ["-c", command], cwd, env, INSTALL_MS);
      expect(done.status, `${command}\n${done.stdout}\n${done.stderr}`).toBe(0);
      outputs.push(done.stdout);
    }
  } finally {
    await Promise.all(services.map((s) => s.stop()));
  }
  return outputs;
}

function auditBlocks(cwd: string, env: NodeJS.ProcessEnv): string {
  return mustRun(
    "npx",
    ["--no-install", "hookbus", "audit", "query", "--outcome", "block", "--json"],
    cwd,
    env,
  );
}

function blocksIn(ndjson: string): Record<string, unknown>[] {
  return ndjson
    .trim()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map(
      (line) =>
        (JSON.parse(line) as { record: { decision: Record<string, unknown> } }).record.decision,
    );
}

describe.each(["ai", "openai-agents", "pi", "mcp", "claude-code"])(
  "npx hookbus init --framework %s, from the packed tarball",
  (framework) => {
    let project: Awaited<ReturnType<typeof tempDir>>;
    beforeAll(async () => {
      project = await tempDir(`hookbus-init-${framework}-`);
    });
    afterAll(async () => {
      await project?.remove();
    });

    it("prints steps that run word for word to a first block in the audit log", async () => {
      const namespace = uniqueNamespace("init");
      const env = userEnv({ NATS_URL: nats.url, HOOKBUS_NAMESPACE: namespace });
      const output = init(project.path, framework, env);
      expect(output).toContain(`# NATS already answers at ${nats.url}: nothing to start`);
      expect(output).toContain(`npm install`);
      const steps = printedSteps(output);
      expect(steps.at(-1)).toBe(
        "npx hookbus audit query --outcome block   # who blocked what, and why",
      );
      const outputs = await runSteps(steps, project.path, env);
      // The printed query's table names the policy; the same query as JSON has the whole decision.
      expect(outputs.at(-1)).toContain("no-shell");
      expect(blocksIn(auditBlocks(project.path, env))).toContainEqual(
        expect.objectContaining({
          blockedBy: "no-shell",
          blockReason: "destructive shell command refused: rm -rf",
        }),
      );
      // What it points at next is there once installed.
      const pointers = output
        .split("\nthen:")[1]!
        .split(/\s+/)
        .filter((word) => word.startsWith("node_modules/hookbus/"))
        .map((word) => word.replace(/[:,]$/, ""));
      expect(pointers.length).toBeGreaterThanOrEqual(3);
      for (const path of pointers) expect(existsSync(join(project.path, path)), path).toBe(true);
      // Run again, it refuses to overwrite what is there.
      const again = run(
        "npm",
        ["exec", "--yes", "--package", tarball, "--", "hookbus", "init", "--framework", framework],
        project.path,
        env,
      );
      expect(again.status).toBe(1);
      expect(again.stderr).toMatch(/HOOKBUS_FILE_EXISTS/);
    }, 900_000);
  },
);

describe("npx hookbus init in a folder that has a package.json", () => {
  it("leaves it alone and prints the exact scripts to add, which then run", async () => {
    const project = await tempDir("hookbus-init-existing-");
    try {
      const manifest = join(project.path, "package.json");
      await writeFile(
        manifest,
        JSON.stringify({ name: "mine", private: true, scripts: { lint: "true" } }),
      );
      const env = userEnv({ NATS_URL: nats.url, HOOKBUS_NAMESPACE: uniqueNamespace("init") });
      const output = init(project.path, "ai", env);
      expect(JSON.parse(await readFile(manifest, "utf8"))).toEqual({
        name: "mine",
        private: true,
        scripts: { lint: "true" },
      });
      const printed = output
        .split("\n")
        .filter((line) => line.startsWith("  #   "))
        .map((line) => line.slice("  #   ".length))
        .join("\n");
      const { scripts } = JSON.parse(printed) as { scripts: Record<string, string> };
      expect(scripts).toMatchObject({
        registry: "hookbus registry apply hookbus.registry.json",
        try: "tsx agent.ts",
      });
      // Do what it says: add "type": "module" and the scripts, then every printed step.
      await writeFile(
        manifest,
        JSON.stringify({
          name: "mine",
          private: true,
          type: "module",
          scripts: { lint: "true", ...scripts },
        }),
      );
      const outputs = await runSteps(printedSteps(output), project.path, env);
      expect(outputs.at(-1)).toContain("no-shell");
      expect(blocksIn(auditBlocks(project.path, env))).toContainEqual(
        expect.objectContaining({ blockedBy: "no-shell" }),
      );
    } finally {
      await project.remove();
    }
  }, 900_000);
});
