/**
 * PostgreSQL for the integration tests: one server per test file (found by test/support/postgres-server.ts,
 * never skipped), and a fresh, migrated database per call of `database()`, dropped after the file.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { loadMigrations, MIGRATIONS_DIR } from "../../src/audit/pg/schema.js";
import { migrateIndex, openIndexPool, type PgPool } from "../../src/indexer/index.js";
import {
  createTestDatabase,
  findPostgres,
  type PostgresHandle,
  type TestDatabase,
} from "./postgres-server.js";

export interface FilePostgres {
  /**
   * A new database with the index schema applied (`upTo`: only the migrations up to that
   * version, an index an older hookbus left, to upgrade), and a pool on it (closed after the file).
   */
  database(options?: { migrate?: boolean; upTo?: number }): Promise<{ url: string; pool: PgPool }>;
}

export function usePostgres(): FilePostgres {
  let server: PostgresHandle | undefined;
  const databases: TestDatabase[] = [];
  const pools: PgPool[] = [];
  beforeAll(async () => {
    server = await findPostgres();
  });
  afterAll(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end().catch(() => {})));
    await Promise.all(databases.splice(0).map((d) => d.drop().catch(() => {})));
    await server?.stop();
  });
  return {
    async database(options = {}) {
      if (server === undefined) throw new Error("no PostgreSQL: call usePostgres() in the file");
      const db = await createTestDatabase(server);
      databases.push(db);
      const pool = openIndexPool(db.url, { max: 4 });
      pools.push(pool);
      if (options.upTo !== undefined) await migrateUpTo(pool, options.upTo);
      else if (options.migrate !== false) await migrateIndex(pool);
      return { url: db.url, pool };
    },
  };
}

/**
 * Applies the migrations numbered up to `version` alone (a copy of their files in a folder): an
 * index as an older hookbus left it, or one upgraded to a given version only.
 */
export async function migrateUpTo(pool: PgPool, version: number): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "hookbus-migrations-"));
  try {
    for (const m of loadMigrations().filter((m) => m.version <= version)) {
      const file = `${String(m.version).padStart(3, "0")}_${m.name}.sql`;
      cpSync(join(MIGRATIONS_DIR, file), join(dir, file));
    }
    return (await migrateIndex(pool, dir)).applied;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
