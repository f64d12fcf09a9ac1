/**
 * Finding PostgreSQL for tests and benchmarks, in this order: `HOOKBUS_TEST_PG` (a postgres://
 * URL) → the machine's server at 127.0.0.1:5432 (user postgres) → a private server started from
 * Debian's `postgresql` package (initdb into a temporary directory, a free port) → testcontainers
 * (where a Docker engine runs) → a clear error (HOOKBUS_PG_NOT_FOUND). Never a silent skip.
 * `HOOKBUS_TEST_PG=private` skips the first two and starts a private server.
 * Each test then works in a database of its own (`createTestDatabase`).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { HookbusError } from "../../src/foundation/errors.js";
import { freePort } from "../../src/testing/free-port.js";

export interface PostgresHandle {
  /** A URL of a database the caller may create databases from (the `postgres` database). */
  url: string;
  source: "env" | "local" | "debian" | "container";
  /** Stops a server started here (debian, container); a no-op otherwise. */
  stop(): Promise<void>;
}

export interface TestDatabase {
  url: string;
  name: string;
  /** Drops the database (terminating its connections). */
  drop(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
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

/** The newest Debian PostgreSQL's bin directory, e.g. /usr/lib/postgresql/15/bin. */
export function findDebianPostgres(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

/** PostgreSQL refuses to run as root: then it runs as the package's `postgres` user. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, args];
  return ["runuser", ["-u", "postgres", "--", command, ...args]];
}

async function startDebian(bin: string): Promise<PostgresHandle> {
  const dir = await mkdtemp(join(tmpdir(), "hookbus-pg-"));
  if (process.getuid?.() === 0) {
    const user = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    chownSync(dir, Number(user.stdout.trim()), Number(gid.stdout.trim()));
  }
  chmodSync(dir, 0o700);
  const data = join(dir, "data");
  const [initCmd, initArgs] = asServerUser(join(bin, "initdb"), [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "--no-sync",
  ]);
  const init = spawnSync(initCmd, initArgs, { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const [cmd, args] = asServerUser(join(bin, "postgres"), [
    "-D",
    data,
    "-p",
    String(port),
    "-k",
    dir,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
  ]);
  let output = "";
  const child: ChildProcess = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const until = Date.now() + 30_000;
  while (!(await answers(url))) {
    if (child.exitCode !== null || Date.now() > until) {
      child.kill("SIGKILL");
      throw new Error(`postgres did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    source: "debian",
    async stop() {
      if (child.exitCode === null)
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.kill("SIGINT"); // fast shutdown
        });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function startContainer(): Promise<PostgresHandle> {
  // Loaded only here: testcontainers is a dev tool and needs a Docker engine.
  const { GenericContainer, Wait } = await import("testcontainers");
  const container = await new GenericContainer("postgres:16-alpine")
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
    .start();
  return {
    url: `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`,
    source: "container",
    stop: async () => void (await container.stop()),
  };
}

export const LOCAL_PG_URL = "postgres://postgres@127.0.0.1:5432/postgres";

export async function findPostgres(): Promise<PostgresHandle> {
  const env = process.env.HOOKBUS_TEST_PG;
  const noop = async () => {};
  if (env !== undefined && env !== "" && env !== "private") {
    if (!(await answers(env)))
      throw new HookbusError(
        "HOOKBUS_PG_NOT_FOUND",
        `HOOKBUS_TEST_PG is set but nothing answers there (${env.replace(/\/\/[^@/]*@/, "//…@")})`,
      );
    return { url: env, source: "env", stop: noop };
  }
  // HOOKBUS_TEST_PG=private skips the machine's server (e.g. to test the fallbacks).
  if (env !== "private" && (await answers(LOCAL_PG_URL)))
    return { url: LOCAL_PG_URL, source: "local", stop: noop };
  const problems: string[] = [];
  const bin = findDebianPostgres();
  if (bin !== undefined) {
    try {
      return await startDebian(bin);
    } catch (error) {
      problems.push(`Debian's postgres (${bin}): ${String((error as Error)?.message ?? error)}`);
    }
  }
  try {
    return await startContainer();
  } catch (error) {
    problems.push(`testcontainers: ${String((error as Error)?.message ?? error)}`);
  }
  throw new HookbusError(
    "HOOKBUS_PG_NOT_FOUND",
    "No PostgreSQL: set HOOKBUS_TEST_PG to a postgres:// URL, run PostgreSQL on 127.0.0.1:5432 " +
      "(user postgres, trust auth), install Debian's package (`apt-get install postgresql`, or " +
      `\`bash scripts/setup.sh\`), or run a Docker engine for testcontainers. (${problems.join("; ")})`,
  );
}

/** A fresh database on the server, for one test file or one test. */
export async function createTestDatabase(
  server: PostgresHandle,
  prefix = "hookbus_test",
): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: server.url });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
