/**
 * The Docker image starts: no Docker engine runs on the project's machines, so this repeats the
 * Dockerfile's runtime stage by hand. It reads the Dockerfile, copies what the final stage copies
 * (dist/ from the build stage is the checkout's `npm run build`) into a temporary directory, runs
 * the stage's `npm ci` there, and starts the image's entry point as the coordinator and a worker,
 * and the scripted agent as docker-compose.yml does, against a private nats-server. Then it runs
 * docker-compose.yml's own service definitions (command, environment, secrets) from that install
 * on a nats-server configured by `hookbus auth deploy/hookbus-auth.json`: each process as its
 * compose user.
 */
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { cp, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { generateAuth, readAuthDescription } from "../../src/auth/generate.js";
import { createSealKey } from "../../src/log/seal/keys.js";
import { findNatsServer, type NatsServerHandle } from "../../src/testing/index.js";
import { uniqueNamespace } from "../support/nats.js";
import { until } from "../support/wait.js";
import { mustRun, root, run, startService, tempDir, userEnv, type Service } from "./support.js";

/** One instruction of the runtime stage that the install repeats, in the Dockerfile's order. */
type Step =
  /** [source in the checkout, destination in the image's WORKDIR]. */
  | { copy: [string, string] }
  /** A `RUN npm ci …` line's arguments. */
  | { npmCi: string[] };

interface RuntimeStage {
  steps: Step[];
  entrypoint: string[];
}

/** Where COPY puts `source`: into `destination` when it names a folder (several sources, or a trailing /). */
function copyTarget(source: string, destination: string, several: boolean): string {
  if (several) return join(destination, source);
  return destination.endsWith("/") ? join(destination, basename(source)) : destination;
}

/** The final stage of the Dockerfile: what it copies and installs, in order, and its entry point. */
function runtimeStage(dockerfile: string): RuntimeStage {
  const stages = dockerfile.split(/^FROM /m);
  const last = stages[stages.length - 1]!.split("\n").map((line) => line.trim());
  const steps: Step[] = [];
  let entrypoint: string[] | undefined;
  for (const line of last) {
    const copy = /^COPY (--from=\S+ )?(.+)$/.exec(line);
    if (copy !== null) {
      const parts = copy[2]!.split(/\s+/);
      const destination = parts.pop()!;
      for (const source of parts) {
        // --from=build copies out of the build stage's WORKDIR (/app): the checkout, once built.
        const inCheckout = copy[1] === undefined ? source : source.replace(/^\/app\//, "");
        steps.push({ copy: [inCheckout, copyTarget(inCheckout, destination, parts.length > 1)] });
      }
    }
    // Every `npm ci` of a RUN line, also after `&&`.
    for (const ci of line.matchAll(/(?:^RUN |&& )npm ci ([^&]*)/g))
      steps.push({ npmCi: ["ci", ...ci[1]!.trim().split(/\s+/)] });
    const entry = /^ENTRYPOINT (\[.*\])$/.exec(line);
    if (entry !== null) entrypoint = JSON.parse(entry[1]!) as string[];
  }
  if (
    entrypoint === undefined ||
    !steps.some((s) => "copy" in s) ||
    !steps.some((s) => "npmCi" in s)
  )
    throw new Error("the Dockerfile's final stage has no COPY, npm ci or ENTRYPOINT line");
  return { steps, entrypoint };
}

let image: Awaited<ReturnType<typeof tempDir>>;
let stage: RuntimeStage;
let nats: NatsServerHandle;

beforeAll(async () => {
  stage = runtimeStage(await readFile(join(root, "Dockerfile"), "utf8"));
  mustRun("npm", ["run", "build"], root, userEnv(), 240_000);
  image = await tempDir("hookbus-image-");
  for (const step of stage.steps) {
    if ("copy" in step) {
      const [source, destination] = step.copy;
      await cp(join(root, source), join(image.path, destination), { recursive: true });
    } else {
      mustRun(
        "npm",
        [...step.npmCi, "--prefer-offline", "--no-audit", "--no-fund"],
        image.path,
        userEnv(),
        240_000,
      );
    }
  }
  nats = await findNatsServer({ own: true });
});

afterAll(async () => {
  await nats?.stop();
  await image?.remove();
});

describe("the Docker image's install (Dockerfile runtime stage, npm ci --omit=dev)", () => {
  it("has no dev dependencies: no TypeScript compiler, no vitest", () => {
    expect(existsSync(join(image.path, "node_modules/typescript"))).toBe(false);
    expect(existsSync(join(image.path, "node_modules/vitest"))).toBe(false);
    expect(existsSync(join(image.path, "dist/cli/main.js"))).toBe(true);
  });

  it("installs the example policies' own dependencies from their workspace, not from hookbus's", async () => {
    const manifest = (file: string) =>
      readFile(join(image.path, file), "utf8").then(
        (text) => JSON.parse(text) as { dependencies?: Record<string, string> },
      );
    const hookbus = await manifest("package.json");
    const policies = await manifest("services/policies/package.json");
    for (const name of ["libphonenumber-js", "validator"]) {
      expect(hookbus.dependencies?.[name], name).toBeUndefined();
      expect(policies.dependencies?.[name], name).toBeDefined();
      expect(existsSync(join(image.path, "node_modules", name)), name).toBe(true);
    }
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

interface ComposeService {
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  secrets?: Array<{ source: string; target: string }>;
}

describe("docker-compose.yml's services from the image's install, as their NATS users", () => {
  it("the operator applies the registry, a coordinator, a worker of each policy and the sealer serve, the agent's session runs, and the auditor verifies the seals", async () => {
    // The file as compose resolves it (Debian's docker-compose needs no engine).
    const config = parse(
      execFileSync("docker-compose", ["-f", join(root, "docker-compose.yml"), "config"], {
        cwd: root,
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      }),
    ) as {
      services: Record<string, ComposeService>;
      secrets: Record<string, { file: string }>;
    };
    // deploy/auth/ as the two commands in docs/operations.md "docker-compose" make it.
    const auth = await tempDir("hookbus-compose-auth-");
    const users = generateAuth(readAuthDescription(join(root, "deploy/hookbus-auth.json")), {
      configFile: join(auth.path, "nats-auth.conf"),
      keyDir: join(auth.path, "keys"),
    }).users;
    const seal = createSealKey();
    writeFileSync(join(auth.path, "seal.nk"), `${seal.seed}\n`, { mode: 0o600 });
    writeFileSync(join(auth.path, "server.conf"), 'include "nats-auth.conf"\n');
    const server = await findNatsServer({
      own: true,
      args: ["-c", join(auth.path, "server.conf")],
    });
    const [command, ...entry] = stage.entrypoint;

    /** A compose service's process: its entry point, command and environment, its secrets as files. */
    const argsOf = (name: string) => {
      const service = config.services[name]!;
      const args = [...(service.entrypoint ?? [command!, ...entry]), ...(service.command ?? [])];
      // Every service listens on 9464 in its own container; here they share a host.
      const http = args.indexOf("--http");
      if (http >= 0) args.splice(http, 2);
      const env: Record<string, string> = { ...service.environment, NATS_URL: server.url };
      for (const secret of service.secrets ?? []) {
        const file = basename(config.secrets[secret.source]!.file);
        const local = file === "seal.nk" ? join(auth.path, file) : join(auth.path, "keys", file);
        for (const [key, value] of Object.entries(env))
          if (value === `/run/secrets/${secret.target}`) env[key] = local;
      }
      expect(env.HOOKBUS_NKEY_FILE, `${name} connects with its own seed`).toMatch(/\.nk$/);
      return { args, env: userEnv(env) };
    };
    const start = (name: string) => {
      const { args, env } = argsOf(name);
      return startService(args[0]!, args.slice(1), image.path, env);
    };

    const services: Service[] = [];
    try {
      const registry = argsOf("registry");
      mustRun(registry.args[0]!, registry.args.slice(1), image.path, registry.env);
      services.push(start("coordinator-1"));
      await services[0]!.waitFor("coordinator ready", 60_000);
      const policies = Object.keys(config.services).filter(
        (name) => name.endsWith("-1") && config.services[name]!.command?.[0] === "worker",
      );
      expect(policies.length).toBe(5);
      for (const name of policies) services.push(start(name));
      const sealer = start("sealer");
      services.push(sealer);
      await sealer.waitFor("sealer active", 60_000);
      for (const worker of services.slice(1, 1 + policies.length))
        await worker.waitFor("worker ready", 60_000);

      const agent = argsOf("agent");
      const session = mustRun(agent.args[0]!, agent.args.slice(1), image.path, agent.env, 120_000);
      expect(session).toMatch(/before_tool_call\s+block/);
      expect(session).toMatch(/before_tool_call\s+allow/);

      // The auditor (read-only) checks every record against the sealer's signed batches.
      const auditor = users.find((u) => u.role === "auditor")!;
      const verify = () =>
        run(
          command!,
          [...entry, "audit", "verify", "--key", seal.publicKey],
          image.path,
          userEnv({
            NATS_URL: server.url,
            HOOKBUS_NAMESPACE: "hookbus",
            HOOKBUS_NKEY_FILE: auditor.keyFile,
            HOOKBUS_INBOX_PREFIX: auditor.inboxPrefix,
          }),
        );
      const verified = await until(
        () => {
          const result = verify();
          return result.status === 0 ? result : undefined;
        },
        60_000,
        "audit verify as the auditor",
      );
      expect(verified.stdout).toMatch(/^OK: /);
    } finally {
      const exits = await Promise.all(services.map((s) => s.stop()));
      await server.stop();
      await auth.remove();
      expect(exits).toEqual(services.map(() => 0));
    }
  }, 600_000);
});
