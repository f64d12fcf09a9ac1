/**
 * The demo's indexed query: when PostgreSQL is reachable (HOOKBUS_INDEX_URL, else the machine's
 * own server at 127.0.0.1:5432, user postgres), the demo creates a database of its own, runs an
 * indexer over its namespace until the index caught up, and queries it as `hookbus audit query
 * --index` and `hookbus audit stats` do; the database is dropped at the end. Without PostgreSQL it
 * says how to get one. The demo never starts or installs a database server.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Bus } from "../../src/bus/bus.js";
import { IndexAuditSource } from "../../src/audit/pg/index-source.js";
import { formatStats, printIndexPage } from "../../src/cli/commands/audit-index.js";
import {
  migrateIndex,
  openIndexPool,
  startIndexer,
  type Indexer,
  type PgPool,
} from "../../src/indexer/index.js";
import { INDEX_URL_ENV } from "../../src/audit/pg/url.js";
import { sleep } from "../../src/foundation/time.js";

const LOCAL_SERVER = "postgres://postgres@127.0.0.1:5432/postgres";
/** How long the demo waits for PostgreSQL to answer, and for the index to catch up. */
const CONNECT_MS = 2000;
const CATCH_UP_MS = 15_000;

export interface DemoIndex {
  /** The demo database's URL (for the commands --keep prints). */
  url: string;
  /** Stops the indexer and drops the demo database. */
  close(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_MS });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_MS });
  client.on("error", () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Indexes the demo's namespace and prints the session's blocked decisions and the namespace's
 * counts from the index. Returns undefined (after printing how to enable it) when no PostgreSQL
 * answers.
 */
export async function showIndexedQuery(
  bus: Bus,
  agentId: string,
  sessionKey: string,
): Promise<DemoIndex | undefined> {
  const server = process.env[INDEX_URL_ENV] || LOCAL_SERVER;
  const where = server.replace(/\/\/[^@/]*@/, "//…@");
  if (!(await answers(server))) {
    console.log(
      `no PostgreSQL answers at ${where}: to see the audit index here, run PostgreSQL there ` +
        `(Debian/Ubuntu: \`apt-get install postgresql\`; the user must be allowed to create databases) ` +
        `or set ${INDEX_URL_ENV}=postgres://USER@HOST:PORT/DB (a role that may create databases)`,
    );
    return undefined;
  }
  const name = `hookbus_demo_${randomBytes(4).toString("hex")}`;
  await admin(server, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(server);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  let pool: PgPool | undefined;
  let indexer: Indexer | undefined;
  const close = async () => {
    await indexer?.stop();
    await pool?.end().catch(() => {});
    await admin(server, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };
  try {
    pool = openIndexPool(dbUrl, { max: 3, applicationName: "hookbus-demo" });
    await migrateIndex(pool);
    indexer = await startIndexer({ bus, pool, consumer: `${name}-indexer`, flushIntervalMs: 20 });
    const until = Date.now() + CATCH_UP_MS;
    let lag = await indexer.lag();
    while (lag.records > 0 && Date.now() < until) {
      await sleep(50);
      lag = await indexer.lag();
    }
    console.log(
      `indexer: ${indexer.stats.indexed} records into database ${name} on ${where}` +
        (lag.records > 0 ? ` (${lag.records} still to index after ${CATCH_UP_MS} ms)` : ""),
    );
    const out = { print: (line: string) => console.log(line), error: console.error };
    console.log(
      `\nthe session's blocked calls (audit query --index … --session … --outcome block):`,
    );
    // The demo's pool is ended by `close`, so the source is not closed here.
    const source = new IndexAuditSource(pool, bus.subjects.namespace);
    await printIndexPage(out, source, { agentId, sessionKey, outcome: "block" }, false);
    console.log(`\ncounts per hook, outcome and policy (audit stats --index …):`);
    for (const line of formatStats(await source.stats({}))) console.log(line);
    return { url: dbUrl, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}
