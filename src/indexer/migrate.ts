/**
 * Versioned schema migrations: `migrations/NNN_name.sql`, applied in order, each in its own
 * transaction, recorded in `hookbus_migrations`. A PostgreSQL advisory lock makes concurrent
 * migrators (two indexers starting at once) take turns: the second finds the work done.
 */
import { loadMigrations, tooNew } from "../audit/pg/schema.js";
import { indexError, type PgPool } from "../audit/pg/pool.js";

export {
  assertIndexSchema,
  expectedSchemaVersion,
  loadMigrations,
  MIGRATIONS_DIR,
  type Migration,
} from "../audit/pg/schema.js";

/** An arbitrary constant naming hookbus's migration lock among the server's advisory locks. */
const MIGRATION_LOCK = 0x686f6f6b; // "hook"

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
