/**
 * Reaching the audit index: a `pg` pool from a `postgres://` URL, and PostgreSQL failures turned
 * into coded errors (HOOKBUS_INDEX_UNAVAILABLE) that carry PostgreSQL's own message.
 *
 * `pg` is loaded when the first pool opens, not when this module is imported: the audit code is
 * reached from entry points that never touch PostgreSQL (`hookbus/status`, the log scan), and
 * they should not pay for, or depend on, the driver. `createRequire` keeps the load synchronous,
 * so `openIndexPool` keeps its signature.
 */
import { createRequire } from "node:module";
import type pg from "pg";
import { HookbusError } from "../../foundation/errors.js";

type PgModule = typeof pg;
let pgModule: PgModule | undefined;

/** The `pg` driver, required on first use. */
function loadPg(): PgModule {
  pgModule ??= createRequire(import.meta.url)("pg") as PgModule;
  return pgModule;
}

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

export interface IndexPoolOptions {
  /** Connections kept (default 4). */
  max?: number;
  /** Applied to every statement, so no query outlives its caller (default 30 s). */
  statementTimeoutMs?: number;
  /** How long to wait for a connection (default 10 s). */
  connectTimeoutMs?: number;
  applicationName?: string;
}

function checkUrl(url: string): void {
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `the index URL must be a postgres:// URL, got ${JSON.stringify(url.replace(/\/\/[^@/]*@/, "//…@"))}`,
      { argument: "index" },
    );
}

export function openIndexPool(url: string, options: IndexPoolOptions = {}): PgPool {
  checkUrl(url);
  const pool = new (loadPg().Pool)({
    connectionString: url,
    max: options.max ?? 4,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    application_name: options.applicationName ?? "hookbus",
  });
  // An idle client losing its server must not crash the process: the next query reports it.
  pool.on("error", () => {});
  return pool;
}

/** Wraps a PostgreSQL failure (connection refused, bad SQL state) as HOOKBUS_INDEX_UNAVAILABLE. */
export function indexError(error: unknown, what: string): HookbusError {
  if (error instanceof HookbusError) return error;
  const e = error as { message?: string; code?: string };
  return new HookbusError(
    "HOOKBUS_INDEX_UNAVAILABLE",
    `${what}: ${e?.message ?? String(error)}`,
    e?.code === undefined ? {} : { sqlState: e.code },
    error,
  );
}

/** Runs `fn` with a client inside one transaction (rolled back when it throws). */
export async function inTransaction<T>(
  pool: PgPool,
  fn: (client: PgClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // A checked-out client whose connection drops emits `error` (the pool's handler covers only
  // idle clients): without a listener that crashes the process. The query in flight rejects
  // too, which is what the caller sees; the broken client is then destroyed, not pooled.
  let broken: Error | undefined;
  const onError = (error: Error) => (broken = error);
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    try {
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      broken ??= await client.query("ROLLBACK").then(
        () => undefined,
        (rollback: unknown) => rollback as Error,
      );
      throw error;
    }
  } finally {
    client.off("error", onError);
    client.release(broken ?? false);
  }
}
