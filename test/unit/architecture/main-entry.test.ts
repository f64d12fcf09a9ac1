/**
 * `import "hookbus"` loads the agent SDK and the policy SDK, nothing of the other roles: no
 * PostgreSQL client, no UI, no sealer, no coordinator (docs/architecture.md, "Entry points").
 * Walks the static imports from src/index.ts (dist/index.js has the same graph, compiled);
 * `import type` loads nothing and a dynamic `import()` only when called, so neither counts.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^"';]*?\sfrom\s+)?["']([^"']+)["']/gm;

interface Graph {
  files: Set<string>;
  packages: Set<string>;
}

function walk(entry: string): Graph {
  const graph: Graph = { files: new Set(), packages: new Set() };
  const pending = [join(repo, entry)];
  while (pending.length > 0) {
    const file = pending.pop()!;
    const rel = relative(repo, file);
    if (graph.files.has(rel)) continue;
    graph.files.add(rel);
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(STATIC_IMPORT)) {
      const spec = match[1]!;
      if (!spec.startsWith(".")) {
        graph.packages.add(
          spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!,
        );
        continue;
      }
      const target = join(dirname(file), spec.replace(/\.js$/, ".ts"));
      pending.push(existsSync(target) ? target : join(target, "index.ts"));
    }
  }
  return graph;
}

describe('import "hookbus"', () => {
  const graph = walk("src/index.ts");

  it("loads no other role, no tool and no surface", () => {
    const foreign = [...graph.files].filter((f) =>
      /^src\/(coordinator|sealer|indexer|audit|replay|status|ui|cli|adapters|policy-test|conformance|contract|testing|cedar)\//.test(
        f,
      ),
    );
    expect(foreign).toEqual([]);
  });

  it("loads no PostgreSQL client, framework, browser or TypeScript loader", () => {
    const heavy = [...graph.packages].filter((p) =>
      [
        "pg",
        "pg-copy-streams",
        "ai",
        "@openai",
        "@mariozechner",
        "@modelcontextprotocol",
        "playwright-core",
        "tsx",
        "@cedar-policy",
      ].includes(p),
    );
    expect(heavy).toEqual([]);
  });

  it("does load the agent SDK and the policy SDK (the walk follows imports)", () => {
    expect(graph.files).toContain("src/agent/client.ts");
    expect(graph.files).toContain("src/policy/policy.ts");
    expect(graph.files).toContain("src/worker/runner.ts");
  });
});
