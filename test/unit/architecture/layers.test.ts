/**
 * The layer rules of .dependency-cruiser.cjs (docs/architecture.md): each kind of violation,
 * written on purpose into a scratch copy of the layout, fails with the rule that names it.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../../../", import.meta.url));
const depcruise = join(repo, "node_modules/.bin/depcruise");

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

async function cruise(cwd: string): Promise<Violation[]> {
  const { stdout } = await run(
    depcruise,
    ["src", "--config", ".dependency-cruiser.cjs", "--output-type", "json"],
    { cwd, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
  return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** A scratch project with the real rules and the given src/ files. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "hookbus-layers-"));
  scratch.push(dir);
  cpSync(join(repo, ".dependency-cruiser.cjs"), join(dir, ".dependency-cruiser.cjs"));
  mkdirSync(join(dir, "scripts"));
  cpSync(join(repo, "scripts/layers.cjs"), join(dir, "scripts/layers.cjs"));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext" } }),
  );
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

// src/ as it is is checked by `npm run lint` itself (the same command on the real tree).
describe.concurrent("the layers of src/", () => {
  it.each<{ what: string; files: Record<string, string>; rule: string }>([
    {
      what: "an upward import (the bus importing the agent SDK)",
      files: {
        "src/bus/codec.ts": 'import { x } from "../agent/deadline.js";\nexport const y = x;\n',
        "src/agent/deadline.ts": "export const x = 1;\n",
      },
      rule: "layer-bus",
    },
    {
      what: "an import between peer roles (the coordinator importing the sealer)",
      files: {
        "src/coordinator/a.ts": 'import { x } from "../sealer/b.js";\nexport const y = x;\n',
        "src/sealer/b.ts": "export const x = 1;\n",
      },
      rule: "layer-worker-agent-coordinator-sealer-audit-replay",
    },
    {
      what: "a role importing a surface (the coordinator importing the CLI)",
      files: {
        "src/coordinator/a.ts": 'import { x } from "../cli/b.js";\nexport const y = x;\n',
        "src/cli/b.ts": "export const x = 1;\n",
      },
      rule: "layer-worker-agent-coordinator-sealer-audit-replay",
    },
    {
      what: "a file cycle inside one folder",
      files: {
        "src/log/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
        "src/log/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
      },
      rule: "no-circular",
    },
    {
      what: "a folder the layers do not name",
      files: {
        "src/newthing/a.ts": 'import { x } from "../foundation/b.js";\nexport const y = x;\n',
        "src/foundation/b.ts": "export const x = 1;\n",
      },
      rule: "unmapped-folder",
    },
    {
      what: "the package importing test support",
      files: {
        "src/agent/a.ts": 'import { x } from "../../test/support/b.js";\nexport const y = x;\n',
        "test/support/b.ts": "export const x = 1;\n",
      },
      rule: "src-imports-only-src",
    },
    {
      what: "the UI reading the index through the indexer",
      files: {
        "src/ui/a.ts": 'import { x } from "../indexer/index.js";\nexport const y = x;\n',
        "src/indexer/index.ts": "export const x = 1;\n",
      },
      rule: "surfaces-read-through-audit",
    },
    {
      what: "the CLI importing an indexer internal",
      files: {
        "src/cli/a.ts": 'import { x } from "../indexer/query.js";\nexport const y = x;\n',
        "src/indexer/query.ts": "export const x = 1;\n",
      },
      rule: "cli-uses-indexer-faces",
    },
  ])(
    "fail on $what",
    async ({ files, rule }) => {
      const violations = await cruise(project(files));
      expect(violations.map((v) => v.rule.name)).toContain(rule);
    },
    60_000,
  );
});
