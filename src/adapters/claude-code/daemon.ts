/**
 * The socket side of the Claude Code hook daemon: a local Unix socket where the thin per-event
 * client (bin/claude-code-hook.mjs) hands over one hook payload and gets back what to print and
 * the exit status. The daemon keeps one NATS connection for every event, so an event costs a
 * socket round trip and the decision instead of starting hookbus and connecting each time.
 *
 * Wire format, one request per connection:
 *   client → daemon: a JSON header line `{"v":1,"agentId","rewrite","timeoutMs","bytes"}\n`,
 *                    then `bytes` bytes of the hook's stdin
 *   daemon → client: one JSON line, `{"reply":{exitCode,stdout,stderr}}` or
 *                    `{"error":{"code","message"}}` (the client then answers closed itself)
 *
 * Anyone who can connect can ask for decisions under this user's NATS identity, so the socket lives
 * in a folder of the user's own (mode 0700) and is itself 0600; a folder or socket owned by someone
 * else is refused, never used.
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, rename, unlink } from "node:fs/promises";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import { z } from "zod";
import { HookbusError, type ErrorCode } from "../../foundation/errors.js";
import { MAX_HOOK_INPUT_BYTES } from "./input.js";
import type { HookReply } from "./run.js";

export const DAEMON_PROTOCOL_VERSION = 1;
/** A header line is a few hundred bytes; anything past this is not our client. */
const MAX_HEADER_BYTES = 4096;
/** How long a client has to read its reply and close before the daemon closes the connection. */
const CLOSE_GRACE_MS = 2_000;
/** How often the daemon checks that its socket path is still its own. */
const SOCKET_CHECK_MS = 2_000;

const RequestHeader = z.object({
  v: z.literal(DAEMON_PROTOCOL_VERSION),
  agentId: z.string().min(1).max(256),
  rewrite: z.enum(["allow", "ask"]),
  timeoutMs: z.number().int().positive(),
  bytes: z.number().int().nonnegative().max(MAX_HOOK_INPUT_BYTES),
});

export interface DaemonRequest {
  agentId: string;
  rewrite: "allow" | "ask";
  deadline: number;
  text: string;
}

export interface HookDaemonOptions {
  socketPath: string;
  logger: Logger;
  /** Requests served at once; one more is answered HOOKBUS_OVERLOADED (the client fails closed). */
  maxConnections: number;
  /** The longest deadline a request may ask for. */
  maxRequestMs: number;
  /** How long a client may take to send its whole request. */
  receiveTimeoutMs: number;
  /** Exit after this long without a request. */
  idleExitMs: number;
  answer(request: DaemonRequest): Promise<HookReply>;
}

export type DaemonStopReason = "idle" | "stopped" | "replaced";

export interface HookDaemon {
  /** Resolves once the daemon stopped listening and its last request was answered. */
  readonly stopped: Promise<DaemonStopReason>;
  stop(reason?: DaemonStopReason): Promise<DaemonStopReason>;
}

function unsafe(path: string, why: string): HookbusError {
  return new HookbusError(
    "HOOKBUS_DAEMON_SOCKET_UNSAFE",
    `${path} ${why}: refusing to use it (another user could answer for the daemon there)`,
    { path },
  );
}

/** The socket's folder: created 0700 when absent; refused unless it is ours and closed to others. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  if (!info.isDirectory()) throw unsafe(dir, "is not a folder");
  if (info.uid !== process.getuid?.()) throw unsafe(dir, `is owned by uid ${info.uid}`);
  if ((info.mode & 0o077) !== 0)
    throw unsafe(dir, `is open to others (mode ${(info.mode & 0o777).toString(8)})`);
}

/** Whether a daemon answers at `path` (a stale socket file refuses the connection). */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * What is at the socket path now: nothing, a stale socket of ours (replaced), or a live daemon
 * (the caller leaves it be). Anything else there is refused.
 */
async function socketPathState(path: string): Promise<"free" | "stale" | "live"> {
  let info;
  try {
    info = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "free";
    throw error;
  }
  if (info.uid !== process.getuid?.()) throw unsafe(path, `is owned by uid ${info.uid}`);
  if (!info.isSocket()) throw unsafe(path, "is not a socket");
  return (await answers(path)) ? "live" : "stale";
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * Bind a fresh name in the folder, then rename it over the socket path: the path always names a
 * working socket (never a half-made one), and two daemons started at once cannot both unlink and
 * bind it; the one whose socket was renamed over notices and stops (SOCKET_CHECK_MS).
 */
async function bindSocket(server: Server, path: string): Promise<number> {
  const temporary = join(dirname(path), `.${randomBytes(6).toString("hex")}.sock`);
  const previousUmask = process.umask(0o177); // the socket is created 0600
  try {
    await listen(server, temporary);
  } finally {
    process.umask(previousUmask);
  }
  await rename(temporary, path);
  return (await lstat(path)).ino;
}

/** The request header line and body, as they arrive; a malformed request is a coded error. */
class RequestReader {
  private head: Buffer = Buffer.alloc(0);
  private header: z.infer<typeof RequestHeader> | undefined;
  private body: Buffer[] = [];
  private received = 0;

  /** The request once complete, else undefined (more bytes needed). */
  push(chunk: Buffer): { header: z.infer<typeof RequestHeader>; text: string } | undefined {
    if (this.header === undefined) {
      // Only the header is joined as it grows (bounded); the body's chunks are joined once.
      this.head = Buffer.concat([this.head, chunk]);
      const newline = this.head.indexOf(10);
      if (newline === -1) {
        if (this.head.length > MAX_HEADER_BYTES) throw badRequest("the request header is too long");
        return undefined;
      }
      this.header = parseHeader(this.head.subarray(0, newline).toString("utf8"));
      chunk = this.head.subarray(newline + 1);
    }
    this.body.push(chunk);
    this.received += chunk.length;
    if (this.received > this.header.bytes) throw badRequest("the request is longer than announced");
    if (this.received < this.header.bytes) return undefined;
    return { header: this.header, text: Buffer.concat(this.body).toString("utf8") };
  }
}

function badRequest(why: string, code: ErrorCode = "HOOKBUS_BAD_MESSAGE"): HookbusError {
  return new HookbusError(code, `the hook daemon got a malformed request: ${why}`);
}

function parseHeader(line: string): z.infer<typeof RequestHeader> {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw badRequest("the header is not JSON");
  }
  const parsed = RequestHeader.safeParse(raw);
  if (parsed.success) return parsed.data;
  const tooLarge = parsed.error.issues.some((issue) => issue.path[0] === "bytes");
  if (tooLarge)
    throw new HookbusError(
      "HOOKBUS_LIMIT_EXCEEDED",
      `the hook input is larger than ${MAX_HOOK_INPUT_BYTES} bytes`,
      { limit: "claudeCodeHookInputBytes" },
    );
  throw badRequest(
    `the header does not match protocol version ${DAEMON_PROTOCOL_VERSION} (a client of another hookbus version?)`,
  );
}

function send(socket: Socket, body: { reply: HookReply } | { error: HookbusError }): void {
  const line =
    "reply" in body
      ? JSON.stringify({ reply: body.reply })
      : JSON.stringify({ error: { code: body.error.code, message: body.error.message } });
  // Whatever the client still sends is read and dropped: a socket never read would never see the
  // client's end, and never close.
  socket.resume();
  socket.end(`${line}\n`);
  // A client that keeps its side open after the reply must not hold the daemon's stop.
  const linger = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  linger.unref();
  socket.once("close", () => clearTimeout(linger));
}

/** Serves the daemon's socket until idle, stopped, or its path is taken over. */
export async function startHookDaemon(options: HookDaemonOptions): Promise<HookDaemon | "running"> {
  const { logger, socketPath } = options;
  await ensurePrivateDir(dirname(socketPath));
  if ((await socketPathState(socketPath)) === "live") return "running";

  let active = 0;
  let idleTimer: NodeJS.Timeout | undefined;
  let stopping: Promise<DaemonStopReason> | undefined;
  let settle!: (reason: DaemonStopReason) => void;
  const stopped = new Promise<DaemonStopReason>((resolve) => (settle = resolve));

  const armIdle = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => void stop("idle"), options.idleExitMs);
  };

  const serve = (socket: Socket) => {
    clearTimeout(idleTimer);
    active++;
    // A connection counts until its reply is written (its close may come a little later).
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      active--;
      if (active === 0 && stopping === undefined) armIdle();
    };
    socket.once("finish", release);
    socket.once("close", release);
    socket.on("error", (error) => logger.debug({ err: error }, "client connection error"));
    if (active > options.maxConnections) {
      send(socket, {
        error: new HookbusError(
          "HOOKBUS_OVERLOADED",
          `the hook daemon is already serving ${options.maxConnections} events`,
        ),
      });
      return;
    }
    handleConnection(socket, options);
  };

  const server = createServer(serve);
  const ino = await bindSocket(server, socketPath);
  server.on("error", (error) => logger.error({ err: error }, "socket server error"));
  armIdle();
  const watch = setInterval(() => {
    lstat(socketPath).then(
      (info) => info.ino !== ino && void stop("replaced"),
      () => void stop("replaced"),
    );
  }, SOCKET_CHECK_MS);
  logger.info({ socket: socketPath }, "claude-code daemon listening");

  async function stop(reason: DaemonStopReason = "stopped"): Promise<DaemonStopReason> {
    stopping ??= (async () => {
      clearTimeout(idleTimer);
      clearInterval(watch);
      // Unlink only our own socket: after "replaced" the path is another daemon's.
      const info = await lstat(socketPath).catch(() => undefined);
      if (info?.ino === ino) await unlink(socketPath).catch(() => undefined);
      // close() waits for the requests in flight, each bounded by its deadline.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      logger.info({ reason }, "claude-code daemon stopped");
      settle(reason);
      return reason;
    })();
    return stopping;
  }

  return { stopped, stop };
}

/** One connection: read the request (bounded in size and time), answer it, close. */
function handleConnection(socket: Socket, options: HookDaemonOptions): void {
  const reader = new RequestReader();
  const receiving = setTimeout(() => {
    socket.removeAllListeners("data");
    send(socket, { error: badRequest("the request did not arrive in time") });
  }, options.receiveTimeoutMs);
  socket.on("data", (chunk: Buffer) => {
    let request;
    try {
      request = reader.push(chunk);
    } catch (error) {
      clearTimeout(receiving);
      socket.removeAllListeners("data");
      send(socket, { error: error as HookbusError });
      return;
    }
    if (request === undefined) return;
    clearTimeout(receiving);
    socket.removeAllListeners("data");
    const timeoutMs = Math.min(request.header.timeoutMs, options.maxRequestMs);
    options
      .answer({
        agentId: request.header.agentId,
        rewrite: request.header.rewrite,
        deadline: Date.now() + timeoutMs,
        text: request.text,
      })
      .then(
        (reply) => send(socket, { reply }),
        (error: unknown) => {
          options.logger.error({ err: error }, "answering a hook event failed");
          send(socket, {
            error: new HookbusError("HOOKBUS_INTERNAL", `the hook daemon failed: ${String(error)}`),
          });
        },
      );
  });
}
