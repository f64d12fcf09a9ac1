/**
 * The index's schema as a reader needs it: the version this code expects (the last of
 * `migrations/NNN_name.sql`) and the check that an index has exactly it. Applying migrations is
 * the indexer's (src/indexer/migrate.ts); reading needs only the check.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { HookbusError } from "../../foundation/errors.js";
import { indexError, type PgPool } from "./pool.js";

/** The repository's (and package's) `migrations/` folder: three levels up from src/audit/pg or dist/audit/pg. */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../../migrations/", import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .map((file) => ({ file, match: FILE.exec(file) }))
    .filter((f) => f.match !== null)
    .map(({ file, match }) => ({
      version: Number(match![1]),
      name: match![2]!,
      sql: readFileSync(`${dir}/${file}`, "utf8"),
    }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new HookbusError(
        "HOOKBUS_INTERNAL",
        `migrations must be numbered 001, 002, … without gaps; found ${m.version} at position ${i + 1}`,
      );
  });
  return migrations;
}

/** The schema version the code expects: the number of the last migration. */
export function expectedSchemaVersion(dir?: string): number {
  return loadMigrations(dir).at(-1)?.version ?? 0;
}

export function tooNew(have: number, latest: number): HookbusError {
  return new HookbusError(
    "HOOKBUS_INDEX_SCHEMA",
    `the index has schema version ${have}, newer than this hookbus knows (${latest}): upgrade hookbus`,
    { have, expected: latest },
  );
}

/** Throws HOOKBUS_INDEX_SCHEMA unless the index has exactly the schema this code expects. */
export async function assertIndexSchema(pool: PgPool, dir?: string): Promise<void> {
  const expected = expectedSchemaVersion(dir);
  let have = 0;
  try {
    const exists = await pool.query<{ t: string | null }>(
      "SELECT to_regclass('hookbus_migrations')::text AS t",
    );
    if (exists.rows[0]?.t !== null && exists.rows[0]?.t !== undefined) {
      const r = await pool.query<{ v: number | null }>(
        "SELECT max(version) AS v FROM hookbus_migrations",
      );
      have = r.rows[0]?.v ?? 0;
    }
  } catch (error) {
    throw indexError(error, "cannot read the index's schema version");
  }
  if (have > expected) throw tooNew(have, expected);
  if (have < expected)
    throw new HookbusError(
      "HOOKBUS_INDEX_SCHEMA",
      `the index has schema version ${have}, this hookbus needs ${expected}: run \`hookbus indexer migrate --index URL\``,
      { have, expected },
    );
}
