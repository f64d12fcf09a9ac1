/**
 * The example policies' own dependencies are theirs, not the hookbus package's (issue 20):
 * services/policies/package.json declares them as an npm workspace of the one lock file, the
 * package does not, and every Dockerfile stage has that manifest before its `npm ci`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const json = <T>(path: string) => JSON.parse(readFileSync(root(path), "utf8")) as T;

interface Manifest {
  type?: string;
  private?: boolean;
  workspaces?: string[];
  dependencies?: Record<string, string>;
}
interface Lock {
  packages: Record<string, Manifest & { dev?: boolean; version?: string }>;
}

const hookbus = json<Manifest>("package.json");
const policies = json<Manifest>("services/policies/package.json");
const lock = json<Lock>("package-lock.json");

/** The packages services/policies imports by name (not node:, not relative). */
function importedPackages(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(root("services/policies")).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(root(`services/policies/${file}`), "utf8");
    for (const [, spec] of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom "([^".][^"]*)"/gm)) {
      if (spec!.startsWith("node:")) continue;
      const parts = spec!.split("/");
      names.add(spec!.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!);
    }
  }
  return names;
}

describe("the example policies' own dependencies", () => {
  it("are declared by services/policies/package.json, a workspace, and not by hookbus", () => {
    expect(hookbus.workspaces).toContain("services/policies");
    expect(policies).toMatchObject({ private: true, type: "module" });
    const own = Object.keys(policies.dependencies ?? {});
    expect(own.sort()).toEqual(["libphonenumber-js", "validator"]);
    for (const name of own) expect(hookbus.dependencies?.[name], name).toBeUndefined();
  });

  it("cover every package the example policies import that hookbus does not depend on", () => {
    const declared = { ...hookbus.dependencies, ...policies.dependencies };
    const missing = [...importedPackages()].filter((name) => declared[name] === undefined);
    expect(missing).toEqual([]);
  });

  it("are locked as the workspace's, installed without dev dependencies", () => {
    expect(lock.packages[""]?.dependencies).toEqual(hookbus.dependencies);
    expect(lock.packages["services/policies"]?.dependencies).toEqual(policies.dependencies);
    for (const name of Object.keys(policies.dependencies ?? {}))
      expect(lock.packages[`node_modules/${name}`]?.dev, name).toBeUndefined();
  });

  it("are installed by every Dockerfile stage: its npm ci has the workspace's manifest", () => {
    const stages = readFileSync(root("Dockerfile"), "utf8")
      .split(/^FROM /m)
      .slice(1);
    expect(stages.length).toBeGreaterThan(0);
    for (const stage of stages) {
      const ci = stage.search(/^RUN npm ci/m);
      const manifest = stage.search(/^COPY services\/policies\/package\.json /m);
      expect(ci, stage.split("\n")[0]).toBeGreaterThan(-1);
      expect(manifest, stage.split("\n")[0]).toBeGreaterThan(-1);
      expect(manifest).toBeLessThan(ci);
    }
  });
});
