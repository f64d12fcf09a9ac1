/**
 * Versioned schema migrations: `migrations/NNN_name.sql`, applied in order, each in its own
 * transaction, recorded in `hookbus_migrations`. A PostgreSQL advisory lock makes concurrent
 * migrators (two indexers starting at once) take turns: the second finds the work done.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { HookbusError } from "../foundation/errors.js";
import { indexError, type PgPool } from "./pg.js";

/** The repository's (and package's) `migrations/` folder: two levels up from src/indexer or dist/indexer. */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations/", import.meta.url));

/** An arbitrary constant naming hookbus's migration lock among the server's advisory locks. */
const MIGRATION_LOCK = 0x686f6f6b; // "hook"

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

export interface MigrateResult {
  /** Versions applied by this call (empty: already up to date). */
  applied: number[];
  version: number;
}

export async function migrateIndex(pool: PgPool, dir?: string): Promise<MigrateResult> {
  const migrations = loadMigrations(dir);
  let client;
  try {
    client = await pool.connect();
  } catch (error) {
    throw indexError(error, "cannot connect to the index");
  }
  // A connection whose rollback or unlock failed is destroyed, not pooled: a session still
  // holding the migration lock would block every later migration.
  let broken: Error | undefined;
  const discard = (error: unknown) => {
    broken = error instanceof Error ? error : new Error(String(error));
  };
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS hookbus_migrations (
           version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = await client.query<{ version: number }>(
        "SELECT version FROM hookbus_migrations",
      );
      const have = new Set(done.rows.map((r) => r.version));
      const newest = Math.max(0, ...have);
      const latest = migrations.at(-1)?.version ?? 0;
      if (newest > latest) throw tooNew(newest, latest);
      const applied: number[] = [];
      for (const m of migrations) {
        if (have.has(m.version)) continue;
        await client.query("BEGIN");
        try {
          await client.query(m.sql);
          await client.query("INSERT INTO hookbus_migrations (version, name) VALUES ($1, $2)", [
            m.version,
            m.name,
          ]);
          await client.query("COMMIT");
        } catch (error) {
          // The migration's own error is the one reported.
          await client.query("ROLLBACK").catch(discard);
          throw indexError(error, `migration ${m.version} (${m.name}) failed`);
        }
        applied.push(m.version);
      }
      return { applied, version: latest };
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(discard);
    }
  } catch (error) {
    throw indexError(error, "migrating the index");
  } finally {
    client.release(broken);
  }
}

function tooNew(have: number, latest: number): HookbusError {
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
