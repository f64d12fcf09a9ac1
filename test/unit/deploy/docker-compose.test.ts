/**
 * docker-compose.yml is validated with Debian's docker-compose, which parses and resolves the
 * file without a Docker engine (none runs on the project's machines). scripts/setup.sh installs it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = new URL("../../../", import.meta.url).pathname;

function compose(...args: string[]): string {
  try {
    return execFileSync("docker-compose", ["-f", `${root}docker-compose.yml`, ...args], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
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

const registry = JSON.parse(
  readFileSync(`${root}services/policies/registry.example.json`, "utf8"),
) as {
  policies: Array<{ name: string }>;
};

describe("docker-compose.yml", () => {
  it("is a valid compose file", () => {
    expect(() => compose("config", "-q")).not.toThrow();
  });

  it("runs NATS with JetStream, the registry, two coordinators, two workers of every example policy and the agent", () => {
    const services = compose("config", "--services").trim().split("\n").sort();
    const expected = [
      "nats",
      "registry",
      "coordinator-1",
      "coordinator-2",
      "agent",
      ...registry.policies.flatMap((p) => [`${p.name}-1`, `${p.name}-2`]),
    ].sort();
    expect(services).toEqual(expected);
  });

  it("pins the NATS server version, enables JetStream, and points every process at it", () => {
    const resolved = compose("config");
    expect(resolved).toMatch(/image: nats:2\.\d+\.\d+/);
    expect(resolved).toMatch(/- -js/);
    const urls = resolved.match(/NATS_URL: nats:\/\/nats:4222/g) ?? [];
    expect(urls.length).toBe(1 + 2 + 2 * registry.policies.length + 1); // registry, coordinators, workers, agent
  });

  it("starts workers from policy modules and a registry file that exist in the image", () => {
    const resolved = compose("config");
    const modules = [...resolved.matchAll(/- services\/policies\/([a-z-]+\.ts)/g)].map(
      (m) => m[1]!,
    );
    expect(modules.length).toBe(2 * registry.policies.length);
    for (const file of modules)
      expect(existsSync(`${root}services/policies/${file}`), file).toBe(true);
    expect(resolved).toContain("services/policies/registry.example.json");
    expect(existsSync(`${root}Dockerfile`)).toBe(true);
  });

  it("probes /healthz on the --http port of every coordinator and worker, and starts the agent once they are healthy", () => {
    const config = parse(compose("config")) as {
      services: Record<
        string,
        {
          command?: string[];
          healthcheck?: { test: string[] };
          depends_on?: Record<string, { condition: string }>;
        }
      >;
    };
    const services = Object.entries(config.services);
    const long = services.filter(
      ([, s]) => s.command?.[0] === "coordinator" || s.command?.[0] === "worker",
    );
    expect(long.length).toBe(2 + 2 * registry.policies.length);
    for (const [name, service] of long) {
      const http = service.command!.indexOf("--http");
      expect(http, `${name} serves --http`).toBeGreaterThan(0);
      const port = service.command![http + 1]!.split(":").pop();
      expect(service.healthcheck?.test.join(" "), name).toContain(`127.0.0.1:${port}/healthz`);
    }
    expect(config.services.nats?.healthcheck?.test.join(" ")).toContain("/healthz");
    const agentNeeds = config.services.agent?.depends_on ?? {};
    for (const [name] of long) expect(agentNeeds[name]?.condition, name).toBe("service_healthy");
    expect(agentNeeds.registry?.condition).toBe("service_completed_successfully");
  });
});
