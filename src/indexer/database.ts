/**
 * `hookbus indexer migrate` on a fresh server: the index's database may not exist yet. It is
 * created when the URL's user may (through the server's `postgres` maintenance database, as
 * `createdb` does); otherwise the error says how to create it.
 */
import pg from "pg";
import { HookbusError } from "../foundation/errors.js";
import { indexError } from "../audit/pg/pool.js";

/** PostgreSQL's SQLSTATE for "database does not exist" (invalid_catalog_name). */
const NO_SUCH_DATABASE = "3D000";
/** The database every PostgreSQL server has for connecting before any other exists. */
const MAINTENANCE_DATABASE = "postgres";
/** PostgreSQL's longest identifier (NAMEDATALEN - 1). */
const MAX_DATABASE_NAME_BYTES = 63;

export function isMissingDatabase(error: unknown): boolean {
  if (error instanceof HookbusError) return error.details.sqlState === NO_SUCH_DATABASE;
  return (error as { code?: unknown } | undefined)?.code === NO_SUCH_DATABASE;
}

/** The database a postgres:// URL names (its path), decoded. */
export function databaseOf(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
  if (name === "" || Buffer.byteLength(name) > MAX_DATABASE_NAME_BYTES)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `the index URL must name a database of 1 to ${MAX_DATABASE_NAME_BYTES} bytes (postgres://host/NAME)`,
      { argument: "index" },
    );
  return name;
}

/** The same server and credentials, on the maintenance database. */
function maintenanceUrl(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${MAINTENANCE_DATABASE}`;
  return parsed.toString();
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function howToCreate(url: string, name: string): string {
  const { hostname, port, username } = new URL(url);
  const flags = [
    hostname === "" ? "" : `-h ${hostname}`,
    port === "" ? "" : `-p ${port}`,
    username === "" ? "" : `-U ${decodeURIComponent(username)}`,
  ].filter((f) => f !== "");
  return `create it as a user who may (createdb ${[...flags, JSON.stringify(name)].join(" ")}, or CREATE DATABASE ${quoteIdentifier(name)}; in psql), then run hookbus indexer migrate again`;
}

/** The error for a missing database the caller was told not to create: how to create it. */
export function missingDatabase(url: string, cause: unknown): HookbusError {
  const name = databaseOf(url);
  return new HookbusError(
    "HOOKBUS_INDEX_UNAVAILABLE",
    `database "${name}" does not exist; ${howToCreate(url, name)}`,
    { sqlState: NO_SUCH_DATABASE, database: name },
    cause,
  );
}

/**
 * Creates the URL's database. Resolves true when it was created, false when someone else created
 * it meanwhile; a refusal is HOOKBUS_INDEX_UNAVAILABLE saying how to create it by hand.
 */
export async function createIndexDatabase(url: string): Promise<boolean> {
  const name = databaseOf(url);
  const client = new pg.Client({
    connectionString: maintenanceUrl(url),
    connectionTimeoutMillis: 10_000,
    statement_timeout: 30_000,
    application_name: "hookbus indexer migrate",
  });
  try {
    await client.connect();
    // CREATE DATABASE takes no parameters: the name is quoted as an identifier instead.
    await client.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "42P04") return false; // duplicate_database
    const wrapped = indexError(error, `database "${name}" does not exist and was not created`);
    throw new HookbusError(
      "HOOKBUS_INDEX_UNAVAILABLE",
      `${wrapped.message}; ${howToCreate(url, name)}`,
      { ...wrapped.details, database: name },
      error,
    );
  } finally {
    await client.end().catch(() => {}); // a connection that never opened has nothing to end
  }
}
