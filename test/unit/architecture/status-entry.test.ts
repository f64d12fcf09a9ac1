/**
 * `import "hookbus/status"` loads no PostgreSQL driver (issue 33, item 4): a status check runs
 * where no index exists. Proven at run time, not by reading imports: a child node records every
 * module the loader resolves (module.registerHooks sees ESM imports and CommonJS requires alike),
 * imports the entry point, and prints what it resolved under node_modules. The control opens an
 * index pool in the same way and must see `pg`, so a probe that saw nothing cannot pass.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../../../", import.meta.url));

const PROBE = `
import { registerHooks } from "node:module";
const resolved = [];
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    resolved.push(result.url);
    return result;
  },
});
const [entry, openPool] = process.argv.slice(-2);
const loaded = await import(entry);
if (openPool === "open") await loaded.openIndexPool("postgres://127.0.0.1:1/none").end();
const packages = resolved
  .map((url) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url)?.[1])
  .filter((name) => name !== undefined);
console.log(JSON.stringify([...new Set(packages)]));
`;

async function packagesLoadedBy(entry: string, openPool: boolean): Promise<string[]> {
  const { stdout } = await run(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      PROBE,
      "--",
      `${repo}${entry}`,
      openPool ? "open" : "import-only",
    ],
    { cwd: repo, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as string[];
}

const POSTGRES = /^(pg|pg-.+)$/;

describe('import "hookbus/status"', () => {
  it("loads no PostgreSQL package (pg, pg-copy-streams, pg-pool, …)", async () => {
    const packages = await packagesLoadedBy("src/status/index.ts", false);
    expect(packages.length).toBeGreaterThan(0); // the probe saw the entry's own imports
    expect(packages.filter((p) => POSTGRES.test(p))).toEqual([]);
  });

  it("the audit index's pool loads pg on first use, not on import (the probe's control)", async () => {
    const imported = await packagesLoadedBy("src/audit/pg/pool.ts", false);
    expect(imported.filter((p) => POSTGRES.test(p))).toEqual([]);
    const opened = await packagesLoadedBy("src/audit/pg/pool.ts", true);
    expect(opened).toContain("pg");
  });
});
