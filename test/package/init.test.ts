/**
 * The five-minute start, as a new user types it: `npx hookbus init --framework ai` in an empty
 * folder (hookbus fetched as the packed tarball), `npm install`, the policies' own tests, and the
 * starter's agent against a private nats-server with the starter's registry, worker and
 * coordinator: the scripted model's `rm -rf /` is refused by the shipped no-shell policy while
 * its `ls` runs, and the audit log names the policy.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServer, type NatsServerHandle } from "../../src/testing/index.js";
import { uniqueNamespace } from "../support/nats.js";
import {
  mustRun,
  npmInstall,
  packCheckout,
  run,
  startService,
  tempDir,
  userEnv,
} from "./support.js";

let packDir: Awaited<ReturnType<typeof tempDir>>;
let project: Awaited<ReturnType<typeof tempDir>>;
let tarball: string;
let nats: NatsServerHandle;
const cwd = () => project.path;

beforeAll(async () => {
  packDir = await tempDir("hookbus-pack-init-");
  tarball = packCheckout(packDir.path);
  nats = await findNatsServer({ own: true });
  project = await tempDir("hookbus-init-");
});

afterAll(async () => {
  await nats?.stop();
  await project?.remove();
  await packDir?.remove();
});

describe("npx hookbus init --framework ai, from the packed tarball", () => {
  it("writes the starter project and its package.json into an empty folder", async () => {
    const out = mustRun(
      "npm",
      ["exec", "--yes", "--package", tarball, "--", "hookbus", "init", "--framework", "ai"],
      cwd(),
      userEnv(),
      240_000,
    );
    expect(out).toContain("hookbus.registry.json");
    expect(out).toContain("node_modules/hookbus/policies/library/");
    const manifest = JSON.parse(await readFile(join(cwd(), "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).toEqual(
      expect.arrayContaining(["hookbus", "ai", "zod", "@nats-io/transport-node"]),
    );
    expect(manifest.scripts.agent).toBe("tsx agent.ts");
    // Run again, it refuses to overwrite what is there.
    const again = run(
      "npm",
      ["exec", "--yes", "--package", tarball, "--", "hookbus", "init", "--framework", "ai"],
      cwd(),
    );
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/HOOKBUS_FILE_EXISTS/);
  });

  it("installs, and the starter policies pass their own tests offline", () => {
    // The tarball stands in for the registry's hookbus; everything else comes from npm.
    npmInstall(cwd(), [tarball]);
    const tested = run("npm", ["run", "--silent", "test:policies"], cwd());
    expect(tested.status, tested.stdout + tested.stderr).toBe(0);
    // The next steps point at the Cedar library: it is where they say.
    expect(existsSync(join(cwd(), "node_modules/hookbus/policies/library/registry.json"))).toBe(
      true,
    );
  });

  it("runs the agent: the shipped no-shell policy refuses rm -rf / and lets ls run", async () => {
    const namespace = uniqueNamespace("init");
    const env = userEnv({ NATS_URL: nats.url, HOOKBUS_NAMESPACE: namespace });
    expect(mustRun("npm", ["run", "--silent", "registry"], cwd(), env)).toMatch(/revision 1/);
    const worker = startService("npm", ["run", "--silent", "worker"], cwd(), env);
    const coordinator = startService("npm", ["run", "--silent", "coordinator"], cwd(), env);
    try {
      await worker.waitFor("worker ready");
      await coordinator.waitFor("coordinator ready");
      const agent = mustRun("npm", ["run", "--silent", "agent"], cwd(), env);
      expect(agent).toContain("exec: ran: ls");
      expect(agent).toMatch(/exec: refused: .*no-shell/);
      expect(agent).not.toContain("ran: rm -rf /");
      const audit = mustRun(
        "npx",
        ["--no-install", "hookbus", "audit", "query", "--outcome", "block", "--json"],
        cwd(),
        env,
      );
      const blocks = audit
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { record: { decision: Record<string, unknown> } });
      expect(blocks.map((b) => b.record.decision)).toEqual([
        expect.objectContaining({
          blockedBy: "no-shell",
          blockReason: "destructive shell command refused: rm -rf",
        }),
      ]);
    } finally {
      await Promise.all([worker.stop(), coordinator.stop()]);
    }
  });
});
