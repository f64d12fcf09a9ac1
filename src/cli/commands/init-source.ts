/**
 * What `hookbus init` must print for the starter's first steps to work where it ran: how to
 * install this same copy of hookbus (it is not on the npm registry yet, so `npm install hookbus`
 * would fail with E404 for anyone who got it as a tarball or a checkout), and how to get a NATS
 * server on this machine. Read here, printed by init.ts.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/** How the starter's package.json names hookbus, and what must run before `npm install`. */
export interface InstallSource {
  /** The dependency spec: `^0.1.0` (the registry) or `file:/abs/hookbus-0.1.0.tgz`. */
  spec: string;
  /** Commands to run before `npm install` (packing a checkout), in the project's folder. */
  before: string[];
  /** Where it came from, for the printed comment. */
  from: string;
}

/** The spec npm recorded when it installed this copy: `npx`/`npm exec` and `npm install` keep it. */
function recordedSpec(packageRoot: string): string | undefined {
  const owner = resolve(packageRoot, "..", "..");
  try {
    const manifest = JSON.parse(readFileSync(join(owner, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    const spec = manifest.dependencies?.hookbus;
    if (spec?.startsWith("file:") === true) {
      const path = spec.slice("file:".length);
      return `file:${isAbsolute(path) ? path : resolve(owner, path)}`;
    }
    return spec;
  } catch {
    return undefined; // no owning project (a global install): the registry
  }
}

/** A checkout of hookbus's repository (the sources are there), not an installed package. */
function isCheckout(packageRoot: string): boolean {
  return existsSync(join(packageRoot, "src", "cli", "main.ts"));
}

export function installSource(
  packageRoot: string,
  version: string,
  project: string,
): InstallSource {
  const root = packageRoot.replace(/[/\\]$/, "");
  if (isCheckout(root)) {
    const tarball = `hookbus-${version}.tgz`;
    return {
      spec: `file:./${tarball}`,
      before: [`(cd ${quote(root)} && npm pack --silent --pack-destination ${quote(project)})`],
      from: `the checkout at ${root}`,
    };
  }
  const recorded = recordedSpec(root);
  if (recorded?.startsWith("file:") === true) {
    const path = recorded.slice("file:".length);
    if (isCheckout(path)) return installSource(path, version, project);
    return { spec: recorded, before: [], from: path };
  }
  return { spec: recorded ?? `^${version}`, before: [], from: "the npm registry" };
}

function quote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}

/** How this machine gets a NATS server with JetStream, as one npm script and one printed line. */
export interface NatsStart {
  /** The `nats` script of the starter's package.json. */
  script: string;
  /** The printed step: a command, or a comment when nothing needs starting or nothing can. */
  line: string;
}

const NO_NATS =
  "no NATS server here: install nats-server (Debian/Ubuntu: apt-get install nats-server; elsewhere https://nats.io) or set NATS_URL to a server with JetStream";

export async function natsStart(env: NodeJS.ProcessEnv = process.env): Promise<NatsStart> {
  const url = env.NATS_URL ?? "nats://127.0.0.1:4222";
  const start = natsStartCommand(env);
  if (await answers(url))
    return { script: start.script, line: `# NATS already answers at ${url}: nothing to start` };
  return start;
}

function natsStartCommand(env: NodeJS.ProcessEnv): NatsStart {
  if (onPath("nats-server", env) !== undefined)
    return {
      script: "nats-server -js -sd .nats",
      line: "npm run nats &            # NATS with JetStream, data in .nats/",
    };
  if (succeeds("docker", ["compose", "version"]))
    return {
      script: "docker compose up -d",
      line: "npm run nats               # NATS with JetStream (docker-compose.yml)",
    };
  if (onPath("docker-compose", env) !== undefined)
    return {
      script: "docker-compose up -d",
      line: "npm run nats               # NATS with JetStream (docker-compose.yml)",
    };
  return { script: `echo '${NO_NATS}' >&2; exit 1`, line: `# ${NO_NATS}` };
}

function onPath(program: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = [...(env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin"];
  return dirs
    .filter((dir) => dir !== "")
    .map((dir) => join(dir, program))
    .find((path) => existsSync(path));
}

function succeeds(program: string, args: string[]): boolean {
  const run = spawnSync(program, args, { stdio: "ignore", timeout: 5_000 });
  return run.status === 0;
}

/** Whether something accepts a TCP connection at the URL's host and port within 500 ms. */
async function answers(url: string): Promise<boolean> {
  let host = "127.0.0.1";
  let port = 4222;
  try {
    const parsed = new URL(url.includes("://") ? url : `nats://${url}`);
    host = parsed.hostname.replace(/^\[|\]$/g, "") || host;
    port = parsed.port === "" ? 4222 : Number(parsed.port);
  } catch {
    return false;
  }
  return new Promise((done) => {
    const socket = connect({ host, port, timeout: 500 });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.once("connect", () => finish(true));
    socket.once("timeout", () => finish(false));
    socket.once("error", () => finish(false));
  });
}
