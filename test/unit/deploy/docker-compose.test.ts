/**
 * docker-compose.yml is validated with Debian's docker-compose, which parses and resolves the
 * file without a Docker engine (none runs on the project's machines). scripts/setup.sh installs it.
 * Beyond the syntax, this checks what the deployment promises: every long-running service has a
 * health check on its readiness, start order waits for health or completion, every process that
 * connects to NATS does so as its own least-privilege user from `hookbus auth
 * deploy/hookbus-auth.json` (and sees no other user's seed), and nats-server accepts the
 * configurations the NATS services start with.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { generateAuth, readAuthDescription } from "../../../src/auth/generate.js";
import type { GeneratedUser } from "../../../src/auth/config.js";

const root = new URL("../../../", import.meta.url).pathname;

interface Service {
  image?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  secrets?: Array<{ source: string; target: string }>;
  volumes?: string[];
  profiles?: string[];
  restart?: string;
}
interface ComposeFile {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
}

/** A copy of the checkout's deployment files, with deploy/auth generated as the README says. */
let dir: string;
let users: GeneratedUser[];

function compose(...args: string[]): string {
  try {
    return execFileSync("docker-compose", ["-f", join(dir, "docker-compose.yml"), ...args], {
      cwd: dir,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      // Only what the file interpolates is under test, not the caller's shell.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
  } catch (error) {
    const e = error as { code?: string; stderr?: string };
    if (e.code === "ENOENT") {
      throw new Error(
        "docker-compose is not installed: run `bash scripts/setup.sh` (Debian package docker-compose)",
      );
    }
    throw new Error(`docker-compose ${args.join(" ")} failed: ${e.stderr ?? String(error)}`);
  }
}

const resolved = (...args: string[]) => parse(compose(...args, "config")) as ComposeFile;

const registry = JSON.parse(
  readFileSync(`${root}services/policies/registry.example.json`, "utf8"),
) as { policies: Array<{ name: string }> };
const workerServices = registry.policies.flatMap((p) => [`${p.name}-1`, `${p.name}-2`]);
const oneShot = (s: Service) => s.restart === "no";
const isHookbus = (s: Service) => s.image === "hookbus:dev";

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hookbus-compose-"));
  cpSync(join(root, "docker-compose.yml"), join(dir, "docker-compose.yml"));
  cpSync(join(root, "deploy"), join(dir, "deploy"), {
    recursive: true,
    filter: (src) => !src.includes(`${join(root, "deploy")}/auth`),
  });
  users = generateAuth(readAuthDescription(join(dir, "deploy/hookbus-auth.json")), {
    configFile: join(dir, "deploy/auth/nats-auth.conf"),
    keyDir: join(dir, "deploy/auth/keys"),
  }).users;
  writeFileSync(join(dir, "deploy/auth/seal.nk"), "SU-a-seed-placeholder\n", { mode: 0o600 });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("docker-compose.yml", () => {
  it("is a valid compose file, alone and with the cluster settings", () => {
    expect(() => compose("config", "-q")).not.toThrow();
    expect(() =>
      compose("--env-file", join(dir, "deploy/cluster.env"), "config", "-q"),
    ).not.toThrow();
  });

  it("runs NATS, the registry, two coordinators, two workers of every example policy, a sealer, PostgreSQL, the index migration, an indexer and the agent", () => {
    const services = Object.keys(resolved().services).sort();
    expect(services).toEqual(
      [
        "nats",
        "nats-2",
        "nats-3",
        "registry",
        "coordinator-1",
        "coordinator-2",
        ...workerServices,
        "sealer",
        "postgres",
        "indexer-migrate",
        "indexer",
        "agent",
      ].sort(),
    );
    const config = resolved();
    expect(config.services.sealer?.command?.[0]).toBe("sealer");
    expect(config.services.indexer?.command?.[0]).toBe("indexer");
    expect(config.services["indexer-migrate"]?.command).toEqual(["indexer", "migrate"]);
    expect(config.services.postgres?.image).toMatch(/^postgres:\d+\.\d+/);
  });

  it("pins the NATS server version and starts it from deploy/nats-server.conf with the generated users", () => {
    const nats = resolved().services.nats!;
    expect(nats.image).toMatch(/^nats:2\.\d+\.\d+/);
    expect(nats.command).toEqual(["-c", "/etc/nats/nats-server.conf"]);
    expect(nats.volumes).toContain(
      `${dir}/deploy/auth/nats-auth.conf:/etc/nats/auth/nats-auth.conf:ro`,
    );
    // The server gets public keys only, never the seeds.
    for (const volume of nats.volumes ?? []) expect(volume).not.toContain("deploy/auth/keys");
  });

  it("health-checks every long-running service: hookbus services on the /readyz of their --http port", () => {
    const config = resolved();
    const long = Object.entries(config.services).filter(([, s]) => !oneShot(s));
    expect(long.length).toBe(3 + 2 + workerServices.length + 3); // nats x3, coordinators, workers, sealer, postgres, indexer
    for (const [name, service] of long) {
      expect(service.healthcheck?.test.length, `${name} has a health check`).toBeGreaterThan(0);
      if (!isHookbus(service)) continue;
      const http = service.command!.indexOf("--http");
      expect(http, `${name} serves --http`).toBeGreaterThan(0);
      const [host, port] = service.command![http + 1]!.split(":");
      expect(host, `${name} listens beyond its loopback (probes and scrapers)`).toBe("0.0.0.0");
      expect(service.healthcheck!.test.join(" "), name).toContain(`127.0.0.1:${port}/readyz`);
    }
    expect(config.services.nats?.healthcheck?.test.join(" ")).toContain(":8222/healthz");
    expect(config.services.postgres?.healthcheck?.test).toContain("pg_isready");
  });

  it("starts each service once what it needs is healthy or has completed", () => {
    const config = resolved();
    const { services } = config;
    for (const [name, service] of Object.entries(services)) {
      for (const [needed, { condition }] of Object.entries(service.depends_on ?? {})) {
        const want = oneShot(services[needed]!)
          ? "service_completed_successfully"
          : "service_healthy";
        expect(condition, `${name} waits for ${needed}`).toBe(want);
      }
      if (!isHookbus(service)) continue;
      if (name === "indexer-migrate") {
        expect(service.depends_on?.postgres).toBeDefined();
        continue;
      }
      if (name !== "agent")
        expect(service.depends_on?.nats, `${name} waits for NATS`).toBeDefined();
    }
    for (const name of ["coordinator-1", "coordinator-2", ...workerServices])
      expect(services[name]?.depends_on?.registry, name).toBeDefined();
    // The log the sealer and indexer read is created by a coordinator; the index by the migration.
    expect(services.sealer?.depends_on?.["coordinator-1"]).toBeDefined();
    expect(services.indexer?.depends_on?.["coordinator-1"]).toBeDefined();
    expect(services.indexer?.depends_on?.["indexer-migrate"]).toBeDefined();
    const agentNeeds = Object.keys(services.agent?.depends_on ?? {});
    for (const name of ["registry", "coordinator-1", "coordinator-2", ...workerServices])
      expect(agentNeeds, name).toContain(name);
  });

  it("connects every hookbus process as its own user from `hookbus auth deploy/hookbus-auth.json`, with its seed alone", () => {
    const config = resolved();
    const roleOf = (name: string, service: Service): string => {
      const command = service.command?.[0];
      if (name === "agent") return "agent demo-agent";
      if (command === "registry") return "operator operator";
      if (command === "coordinator") return `coordinator ${service.command![2]}`;
      if (command === "worker")
        return `worker ${/policies\/([a-z-]+)\.ts/.exec(service.command![1]!)![1]}`;
      return `${command} ${command}`; // sealer, indexer
    };
    const connecting = Object.entries(config.services).filter(
      ([name, s]) => isHookbus(s) && name !== "indexer-migrate",
    );
    expect(connecting.length).toBe(1 + 2 + workerServices.length + 3); // registry, coordinators, workers, sealer, indexer, agent
    for (const [name, service] of connecting) {
      const [role, user] = roleOf(name, service).split(" ");
      const generated = users.find((u) => u.role === role && u.name === user);
      expect(
        generated,
        `${name} is ${role} ${user}, a user of deploy/hookbus-auth.json`,
      ).toBeDefined();
      expect(service.environment?.HOOKBUS_NKEY_FILE, name).toBe("/run/secrets/nkey");
      expect(service.environment?.HOOKBUS_INBOX_PREFIX, name).toBe(generated!.inboxPrefix);
      const nkeys = (service.secrets ?? []).filter((s) => s.target === "nkey");
      expect(nkeys.length, name).toBe(1);
      expect(config.secrets[nkeys[0]!.source]?.file, name).toBe(generated!.keyFile);
      expect(existsSync(generated!.keyFile)).toBe(true);
      // No other user's seed is mounted into the container.
      const others = (service.secrets ?? []).map((s) => config.secrets[s.source]?.file);
      expect(
        others.filter((f) => f?.includes("/deploy/auth/keys/")),
        name,
      ).toEqual([generated!.keyFile]);
    }
    expect(config.services.sealer?.environment?.HOOKBUS_SEAL_KEY_FILE).toBe("/run/secrets/seal.nk");
    expect(config.services.sealer?.secrets?.map((s) => s.target)).toContain("seal.nk");
    for (const s of ["indexer", "indexer-migrate"])
      expect(config.services[s]?.environment?.HOOKBUS_INDEX_URL, s).toMatch(
        /^postgres:\/\/.*@postgres:5432\//,
      );
  });

  it("the cluster profile runs three clustered NATS nodes and 3 replicas of every stream and bucket", () => {
    expect(readFileSync(join(dir, "deploy/cluster.env"), "utf8")).toMatch(
      /^COMPOSE_PROFILES=cluster$/m,
    );
    const single = resolved();
    for (const node of ["nats-2", "nats-3"])
      expect(single.services[node]?.profiles, node).toEqual(["cluster"]);
    expect(single.services.nats?.profiles).toBeUndefined();
    const cluster = resolved("--env-file", join(dir, "deploy/cluster.env"));
    for (const node of ["nats", "nats-2", "nats-3"]) {
      expect(cluster.services[node]?.command, node).toEqual(["-c", "/etc/nats/nats-cluster.conf"]);
      expect(cluster.services[node]?.environment?.NATS_SERVER_NAME, node).toBeDefined();
    }
    const connecting = Object.entries(cluster.services).filter(
      ([name, s]) => isHookbus(s) && name !== "indexer-migrate",
    );
    for (const [name, service] of connecting) {
      expect(service.environment?.HOOKBUS_REPLICAS, name).toBe("3");
      expect(service.environment?.NATS_URL, name).toBe(
        "nats://nats:4222,nats://nats-2:4222,nats://nats-3:4222",
      );
    }
    for (const [name, service] of Object.entries(single.services).filter(
      ([, s]) => isHookbus(s) && s.environment?.NATS_URL !== undefined,
    ))
      expect(service.environment?.HOOKBUS_REPLICAS, name).toBe("1");
  });

  it("nats-server accepts both NATS configurations with the generated users", () => {
    for (const file of ["nats-server.conf", "nats-cluster.conf"]) {
      const conf = join(dir, "deploy", file);
      writeFileSync(
        conf,
        readFileSync(conf, "utf8").replace('"/data"', JSON.stringify(join(dir, "data"))),
      );
      const output = execFileSync("nats-server", ["-t", "-c", conf], {
        encoding: "utf8",
        env: { ...process.env, NATS_SERVER_NAME: "nats-1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      expect(output + "", file).toBe("");
    }
  });
});
