#!/usr/bin/env node
// hookbus-claude-code-hook: the fast Claude Code command hook (docs/adapters/claude-code.md).
//
// Claude Code starts this once per hook event. It loads nothing of hookbus: it reads the event from
// stdin, hands it to a long-lived `hookbus claude-code-daemon` over a Unix socket (starting the
// daemon on first use), and prints the daemon's answer with its exit status. Whatever goes wrong —
// no daemon, a daemon that cannot start, crashes mid-request or is too slow, a stale or foreign
// socket — the answer is closed, exactly as `hookbus claude-code-hook` answers when hookbus cannot
// decide: a tool call denied, a prompt refused, MCP output withheld, and exit 2 (Claude Code's
// blocking error) when the input names no event to answer in the terms of.
//
// Only Node built-ins are loaded, so an event costs a Node start and one socket round trip; what
// only the first event (starting the daemon) or a failure needs is loaded then. They are loaded
// with require: an ES import of a built-in costs about a millisecond more each, which is a tenth of
// what this script adds to Node's start (bench/claude-code.ts measures it).
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { closeSync, lstatSync, mkdirSync, openSync, readFileSync } = require("node:fs");
const { createConnection } = require("node:net");
const { tmpdir } = require("node:os");
const { join, resolve } = require("node:path");

/** As MAX_HOOK_INPUT_BYTES in src/adapters/claude-code/input.ts: larger stdin exits 2. */
const MAX_HOOK_INPUT_BYTES = 16 * 1024 * 1024;
/** A reply may carry a rewritten MCP output about the size of the input, JSON-escaped. */
const MAX_REPLY_BYTES = 3 * MAX_HOOK_INPUT_BYTES;
const DEFAULT_TIMEOUT_MS = 10_000;
/** The daemon is asked to answer (closed, if need be) this much before the client gives up. */
const DAEMON_MARGIN_MS = 150;
const START_POLL_MS = 15;
const PROTOCOL_VERSION = 1;

const HELP = `usage: hookbus-claude-code-hook [--agent ID] [--rewrite allow|ask] [--timeout-ms MS]
                                [--server URL] [--creds FILE] [--nkey FILE] [--namespace NS]

The fast Claude Code command hook: the same answers as \`hookbus claude-code-hook\`, through a
long-lived local daemon (\`hookbus claude-code-daemon\`) that it starts on first use. Closed when the
daemon cannot answer. Its socket and log are in $HOOKBUS_RUNTIME_DIR (default: $XDG_RUNTIME_DIR/hookbus,
else the temporary folder's hookbus-<uid>). docs/adapters/claude-code.md has the settings.`;

const VALUE_FLAGS = new Set([
  "server",
  "creds",
  "nkey",
  "inbox-prefix",
  "namespace",
  "agent",
  "rewrite",
  "timeout-ms",
]);

class HookFailure extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

let finished = false;
/** stdin, once read: a closed answer is given in the terms of the event it names. */
let input;

function finish(exitCode, stdout, stderr) {
  if (finished) return;
  finished = true;
  if (stderr !== "") process.stderr.write(stderr);
  process.stdout.write(stdout, () => process.exit(exitCode));
}

async function failClosed(code, message) {
  const blocking = () => finish(2, "", `${code}: ${message}\n`);
  let raw;
  try {
    raw = input === undefined ? undefined : JSON.parse(input.toString("utf8"));
  } catch {
    return blocking(); // not JSON: no event to answer in the terms of
  }
  let answers;
  try {
    answers = await import("./claude-code-failure.mjs");
  } catch {
    return blocking(); // a broken install still refuses the action
  }
  const name = answers.eventNameOf(raw);
  if (name === undefined) return blocking();
  finish(0, `${JSON.stringify(answers.failureAnswer(name, raw.tool_name, code, message))}\n`, "");
}

function parseArgs(argv) {
  const flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") return { help: true };
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (match === null || !VALUE_FLAGS.has(match[1]))
      throw new HookFailure("HOOKBUS_USAGE", `unknown option ${JSON.stringify(arg)} (--help)`);
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new HookFailure("HOOKBUS_USAGE", `--${match[1]} needs a value`);
    flags[match[1]] = value;
  }
  const timeoutMs = Number(flags["timeout-ms"] ?? DEFAULT_TIMEOUT_MS);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 120_000)
    throw new HookFailure(
      "HOOKBUS_INVALID_ARGUMENT",
      `--timeout-ms must be 100-120000 milliseconds, got ${JSON.stringify(flags["timeout-ms"])}`,
    );
  const rewrite = flags.rewrite ?? "allow";
  if (rewrite !== "allow" && rewrite !== "ask")
    throw new HookFailure(
      "HOOKBUS_INVALID_ARGUMENT",
      `--rewrite must be allow or ask, got ${JSON.stringify(rewrite)}`,
    );
  const agentId = flags.agent ?? process.env.HOOKBUS_AGENT_ID ?? "claude-code";
  return { help: false, flags, timeoutMs, rewrite, agentId };
}

/**
 * The settings that choose the NATS connection, flags first, then the environment the daemon
 * would read; files as absolute paths, so projects with one relative creds path and two files do
 * not share a daemon. The daemon gets them all as flags.
 */
function connectionSettings(flags) {
  const env = process.env;
  const file = (value) => (value ? resolve(value) : value);
  return {
    server: flags.server ?? env.NATS_URL,
    creds: file(flags.creds ?? env.NATS_CREDS),
    nkey: file(flags.nkey ?? env.HOOKBUS_NKEY_FILE),
    "inbox-prefix": flags["inbox-prefix"] ?? env.HOOKBUS_INBOX_PREFIX,
    namespace: flags.namespace ?? env.HOOKBUS_NAMESPACE,
  };
}

/** This install's version: a daemon of another hookbus version is never asked (upgrades). */
function packageVersion() {
  try {
    return JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
  } catch {
    return undefined; // the protocol version still separates incompatible daemons
  }
}

/**
 * 16 hex digits naming the settings. With a secret among them, SHA-256 (its name appears in error
 * messages, and must say nothing of the secret); without, FNV-1a, which spares loading node:crypto
 * on every event.
 */
function settingsKey(text, secret) {
  if (secret)
    return require("node:crypto").createHash("sha256").update(text).digest("hex").slice(0, 16);
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, "utf8"))
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return hash.toString(16).padStart(16, "0");
}

/**
 * One daemon per user, hookbus version and NATS connection: the socket's name hashes every
 * setting that chooses the connection, secrets only as part of the hash.
 */
function daemonPaths(settings) {
  const env = process.env;
  const uid = process.getuid();
  const dir =
    env.HOOKBUS_RUNTIME_DIR ||
    (env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, "hookbus") : join(tmpdir(), `hookbus-${uid}`));
  const secrets = [env.NATS_PASSWORD, env.NATS_TOKEN, env.HOOKBUS_NKEY_SEED];
  const identity = [PROTOCOL_VERSION, packageVersion(), settings, env.NATS_USER, ...secrets];
  const key = settingsKey(
    JSON.stringify(identity),
    secrets.some((v) => v !== undefined),
  );
  return { dir, socket: join(dir, `cc-${key}.sock`), log: join(dir, `cc-${key}.log`) };
}

/** Refuses a folder or socket another user could have put there: it could answer "allow". */
function checkOwned(path, kind) {
  let info;
  try {
    info = lstatSync(path);
  } catch (error) {
    if (error.code === "ENOENT") return false;
    throw error;
  }
  const ok =
    info.uid === process.getuid() &&
    (kind === "dir" ? info.isDirectory() && (info.mode & 0o077) === 0 : info.isSocket());
  if (!ok)
    throw new HookbusUnsafe(
      path,
      kind === "dir"
        ? "is not a folder of yours closed to others (mode 0700)"
        : "is not your socket",
    );
  return true;
}

class HookbusUnsafe extends HookFailure {
  constructor(path, why) {
    super("HOOKBUS_DAEMON_SOCKET_UNSAFE", `${path} ${why}: refusing to use it`);
  }
}

async function readStdin() {
  const chunks = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += chunk.length;
    if (size > MAX_HOOK_INPUT_BYTES)
      throw new HookFailure(
        "HOOKBUS_LIMIT_EXCEEDED",
        `the hook input is larger than ${MAX_HOOK_INPUT_BYTES} bytes`,
      );
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A connected socket, or undefined when no daemon listens there (absent or stale). */
function tryConnect(path) {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", (error) => {
      if (error.code === "ENOENT" || error.code === "ECONNREFUSED") resolve(undefined);
      else
        reject(
          new HookFailure("HOOKBUS_DAEMON_UNAVAILABLE", `cannot reach ${path}: ${error.message}`),
        );
    });
  });
}

async function startDaemon(paths, settings) {
  const { spawn } = require("node:child_process");
  const { fileURLToPath } = require("node:url");
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  checkOwned(paths.dir, "dir");
  const log = openSync(paths.log, "a", 0o600);
  const cli = fileURLToPath(new URL("./hookbus.js", import.meta.url));
  const args = [cli, "claude-code-daemon", "--socket", paths.socket];
  for (const [name, value] of Object.entries(settings))
    if (value !== undefined) args.push(`--${name}`, value);
  try {
    return spawn(process.execPath, args, { detached: true, stdio: ["ignore", log, log] });
  } finally {
    closeSync(log);
  }
}

/** Start the daemon and wait (bounded) for its socket; a daemon that exits first is a failure. */
async function startAndConnect(paths, settings, deadline) {
  const child = await startDaemon(paths, settings);
  let exited;
  child.once("exit", (code, signal) => (exited = signal ?? `exit ${code}`));
  child.once("error", (error) => (exited = error.message));
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  while (Date.now() < deadline) {
    checkOwned(paths.socket, "socket");
    const socket = await tryConnect(paths.socket);
    if (socket !== undefined) {
      child.unref();
      return socket;
    }
    // Exit 0 is "another daemon already serves it": one more look finds that one.
    if (exited !== undefined && exited !== "exit 0")
      throw new HookFailure(
        "HOOKBUS_DAEMON_UNAVAILABLE",
        `the hook daemon exited (${exited}) before it listened: see ${paths.log}`,
      );
    await sleep(START_POLL_MS);
  }
  child.unref();
  throw new HookFailure(
    "HOOKBUS_DAEMON_UNAVAILABLE",
    `the hook daemon did not start listening before the hook's deadline: see ${paths.log}`,
  );
}

/** Send the event, read the one reply line; a connection closed without it is a failure. */
function exchange(socket, header, body) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    socket.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_REPLY_BYTES) socket.destroy();
      else chunks.push(chunk);
    });
    socket.on("error", () => {}); // "close" follows and decides
    socket.once("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const newline = text.indexOf("\n");
      try {
        if (newline === -1) throw new Error("no reply");
        resolve(JSON.parse(text.slice(0, newline)));
      } catch {
        reject(
          new HookFailure(
            "HOOKBUS_DAEMON_UNAVAILABLE",
            "the hook daemon closed the connection without answering",
          ),
        );
      }
    });
    socket.write(`${JSON.stringify(header)}\n`);
    socket.write(body);
  });
}

function deliver(message) {
  const reply = message?.reply;
  if (reply !== undefined) {
    const { exitCode, stdout, stderr } = reply;
    if (
      (exitCode === 0 || exitCode === 2) &&
      typeof stdout === "string" &&
      typeof stderr === "string"
    )
      return finish(exitCode, stdout, stderr);
  }
  const error = message?.error;
  if (typeof error?.code === "string" && typeof error.message === "string")
    return failClosed(error.code, error.message);
  failClosed("HOOKBUS_DAEMON_UNAVAILABLE", "the hook daemon's reply is malformed");
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) return finish(0, `${HELP}\n`, "");
  const deadline = Date.now() + args.timeoutMs;
  // The guarantee: whatever hangs, the hook answers closed by its deadline.
  setTimeout(
    () =>
      failClosed(
        "HOOKBUS_CALL_TIMEOUT",
        "the hook daemon did not answer before the hook's deadline",
      ),
    args.timeoutMs,
  );
  input = await readStdin();
  const settings = connectionSettings(args.flags);
  const paths = daemonPaths(settings);
  checkOwned(paths.dir, "dir");
  checkOwned(paths.socket, "socket");
  const socket =
    (await tryConnect(paths.socket)) ??
    (await startAndConnect(paths, settings, deadline - DAEMON_MARGIN_MS));
  const header = {
    v: PROTOCOL_VERSION,
    agentId: args.agentId,
    rewrite: args.rewrite,
    timeoutMs: Math.max(1, deadline - DAEMON_MARGIN_MS - Date.now()),
    bytes: input.length,
  };
  deliver(await exchange(socket, header, input));
}

main().catch((error) =>
  error instanceof HookFailure
    ? failClosed(error.code, error.message)
    : failClosed(
        "HOOKBUS_DAEMON_UNAVAILABLE",
        `the hook client failed: ${error?.message ?? error}`,
      ),
);
