/**
 * PostgreSQL for the integration tests: one server per test file (found by test/support/postgres-server.ts,
 * never skipped), and a fresh, migrated database per call of `database()`, dropped after the file.
 */
import { afterAll, beforeAll } from "vitest";
import { migrateIndex, openIndexPool, type PgPool } from "../../src/indexer/index.js";
import {
  createTestDatabase,
  findPostgres,
  type PostgresHandle,
  type TestDatabase,
} from "./postgres-server.js";

export interface FilePostgres {
  /** A new database with the index schema applied, and a pool on it (closed after the file). */
  database(options?: { migrate?: boolean }): Promise<{ url: string; pool: PgPool }>;
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
      if (options.migrate !== false) await migrateIndex(pool);
      return { url: db.url, pool };
    },
  };
}
