/**
 * The Docker image starts: no Docker engine runs on the project's machines, so this repeats the
 * Dockerfile's runtime stage by hand. It reads the Dockerfile, copies what the final stage copies
 * (dist/ from the build stage is the checkout's `npm run build`) into a temporary directory, runs
 * the stage's `npm ci` there, and starts the image's entry point as the coordinator and a worker,
 * and the scripted agent as docker-compose.yml does, against a private nats-server.
 */
import { cp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServer, type NatsServerHandle } from "../../src/testing/index.js";
import { uniqueNamespace } from "../support/nats.js";
import { mustRun, root, startService, tempDir, userEnv, type Service } from "./support.js";

interface RuntimeStage {
  /** [source in the checkout, destination in the image's WORKDIR]. */
  copies: Array<[string, string]>;
  /** The stage's `npm ci …` arguments. */
  npmCi: string[];
  entrypoint: string[];
}

/** The final stage of the Dockerfile: what it copies, how it installs, its entry point. */
function runtimeStage(dockerfile: string): RuntimeStage {
  const stages = dockerfile.split(/^FROM /m);
  const last = stages[stages.length - 1]!.split("\n").map((line) => line.trim());
  const copies: Array<[string, string]> = [];
  let npmCi: string[] | undefined;
  let entrypoint: string[] | undefined;
  for (const line of last) {
    const copy = /^COPY (--from=\S+ )?(.+)$/.exec(line);
    if (copy !== null) {
      const parts = copy[2]!.split(/\s+/);
      const destination = parts.pop()!;
      for (const source of parts) {
        // --from=build copies out of the build stage's WORKDIR (/app): the checkout, once built.
        const inCheckout = copy[1] === undefined ? source : source.replace(/^\/app\//, "");
        const target = parts.length > 1 ? join(destination, inCheckout) : destination;
        copies.push([inCheckout, target]);
      }
    }
    const run = /^RUN (npm ci [^&]*)/.exec(line);
    if (run !== null) npmCi = run[1]!.trim().split(/\s+/).slice(1);
    const entry = /^ENTRYPOINT (\[.*\])$/.exec(line);
    if (entry !== null) entrypoint = JSON.parse(entry[1]!) as string[];
  }
  if (npmCi === undefined || entrypoint === undefined || copies.length === 0)
    throw new Error("the Dockerfile's final stage has no COPY, npm ci or ENTRYPOINT line");
  return { copies, npmCi, entrypoint };
}

let image: Awaited<ReturnType<typeof tempDir>>;
let stage: RuntimeStage;
let nats: NatsServerHandle;

beforeAll(async () => {
  stage = runtimeStage(await readFile(join(root, "Dockerfile"), "utf8"));
  mustRun("npm", ["run", "build"], root, userEnv(), 240_000);
  image = await tempDir("hookbus-image-");
  for (const [source, destination] of stage.copies)
    await cp(join(root, source), join(image.path, destination), { recursive: true });
  mustRun(
    "npm",
    [...stage.npmCi, "--prefer-offline", "--no-audit", "--no-fund"],
    image.path,
    userEnv(),
    240_000,
  );
  nats = await findNatsServer({ own: true });
});

afterAll(async () => {
  await nats?.stop();
  await image?.remove();
});

describe("the Docker image's install (Dockerfile runtime stage, npm ci --omit=dev)", () => {
  it("has no dev dependencies: no TypeScript compiler, no vitest", async () => {
    const { existsSync } = await import("node:fs");
    expect(existsSync(join(image.path, "node_modules/typescript"))).toBe(false);
    expect(existsSync(join(image.path, "node_modules/vitest"))).toBe(false);
    expect(existsSync(join(image.path, "dist/cli/main.js"))).toBe(true);
  });

  it("starts the coordinator, a worker of the example policies and the scripted agent", async () => {
    const env = userEnv({ NATS_URL: nats.url, HOOKBUS_NAMESPACE: uniqueNamespace("image") });
    const [command, ...entry] = stage.entrypoint;
    const hookbus = (...args: string[]) =>
      startService(command!, [...entry, ...args], image.path, env);
    const services: Service[] = [];
    try {
      mustRun(
        command!,
        [...entry, "registry", "apply", "services/policies/registry.example.json"],
        image.path,
        env,
      );
      services.push(hookbus("coordinator"));
      services.push(hookbus("worker", "services/policies/index.ts"));
      await services[0]!.waitFor("coordinator ready", 60_000);
      await services[1]!.waitFor("worker ready", 60_000);
      // The agent service's entry point in docker-compose.yml.
      const agent = mustRun(
        "node",
        ["--import", "tsx", "services/scripted-agent.ts", "--pretty"],
        image.path,
        env,
        120_000,
      );
      expect(agent).toMatch(/before_tool_call\s+block/);
      expect(agent).toMatch(/before_tool_call\s+allow/);
    } finally {
      const exits = await Promise.all(services.map((s) => s.stop()));
      expect(exits).toEqual(services.map(() => 0));
    }
  });
});
