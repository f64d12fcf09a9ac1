/**
 * Running the MCP gateway as a process: the upstream is a command (stdio) or a URL (Streamable
 * HTTP); the downstream is this process's stdio (one session) or a Streamable HTTP endpoint on a
 * local port (one session per MCP session id, bounded).
 */
import { randomUUID } from "node:crypto";
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { HookbusError } from "../../foundation/errors.js";
import { createMcpGateway, type McpGatewayOptions, type McpPassThrough } from "./gateway.js";
import { readLaunchers, stillRunning, type Launchers } from "./launcher.js";
import { UpstreamTools } from "./offered.js";

export type Upstream = { command: string; args: string[] } | { url: string };

export interface ServeOptions {
  hookbus: McpGatewayOptions["hookbus"];
  /** Resolves when the gateway must stop (the CLI: SIGTERM, SIGINT or SIGHUP). */
  stop?: Promise<unknown>;
  upstream: Upstream;
  agentId: string;
  /** stdio mode: the session key (default: a new UUID per process). */
  sessionKey?: string;
  passThrough?: readonly McpPassThrough[];
  logger: Logger;
  version: string;
  /**
   * stdio mode: the parent and the wrappers that started this process (launcher.ts), read as
   * early as the caller can: a launcher killed before they are read is not seen. Default: read
   * when serveStdio starts.
   */
  launchers?: Launchers;
}

/** HTTP mode: sessions beyond this are refused (503) until one ends or idles out. */
export const MAX_HTTP_SESSIONS = 256;
/** An HTTP session with no request for this long is closed. */
export const HTTP_SESSION_IDLE_MS = 30 * 60_000;
/** Largest request body the HTTP mode reads. */
export const MAX_HTTP_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The upstream command's environment: the gateway's own (an MCP host gives the server's settings
 * to whatever command it starts), less hookbus's and NATS's credentials, which would let the
 * server call hookbus as this agent.
 */
export function upstreamEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env))
    if (value !== undefined && !key.startsWith("NATS_") && !key.startsWith("HOOKBUS_"))
      out[key] = value;
  return out;
}

export async function connectUpstream(upstream: Upstream, version: string): Promise<Client> {
  const client = new Client({ name: "hookbus-mcp-gateway", version });
  const transport =
    "url" in upstream
      ? new StreamableHTTPClientTransport(new URL(upstream.url))
      : new StdioClientTransport({
          command: upstream.command,
          args: upstream.args,
          env: upstreamEnvironment(),
          stderr: "inherit",
        });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_MCP_UPSTREAM",
      `cannot start the upstream MCP server (${"url" in upstream ? upstream.url : [upstream.command, ...upstream.args].join(" ")}): ${(error as Error).message}`,
      {},
      error,
    );
  }
  return client;
}

/** Resolves when the upstream's connection ends (it exited, or the URL went away). */
function upstreamClosed(client: Client): Promise<void> {
  return new Promise((resolve) => {
    client.onclose = () => resolve();
  });
}

/** How often stdio mode checks that the process that started it is still there. */
const PARENT_CHECK_MS = 1_000;

/**
 * Resolves when this process's MCP client is gone: stdin ended or closed (the SDK's stdio
 * transport does not report it), the parent exited (a host that signals `npx` rather than this
 * process leaves it re-parented, and its stdin may stay open in a grandchild), or a process that
 * started the command through a wrapper exited (npx killed with -9 leaves npm's shell waiting on
 * this process: launcher.ts).
 */
function downstreamGone(launchers: Launchers): { gone: Promise<string>; dispose: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let onEnd: (() => void) | undefined;
  const gone = new Promise<string>((resolve) => {
    onEnd = () => resolve("stdin closed");
    process.stdin.once("end", onEnd);
    process.stdin.once("close", onEnd);
    const { parent, chain } = launchers;
    timer = setInterval(() => {
      if (process.ppid !== parent) return resolve("parent exited");
      const exited = chain.find((p) => !stillRunning(p));
      if (exited !== undefined)
        resolve(`${exited.name} (pid ${exited.pid}), which started it, exited`);
    }, PARENT_CHECK_MS);
    timer.unref();
  });
  const dispose = () => {
    clearInterval(timer);
    if (onEnd !== undefined) {
      process.stdin.off("end", onEnd);
      process.stdin.off("close", onEnd);
    }
  };
  return { gone, dispose };
}

/**
 * One session on this process's stdin/stdout; resolves with the exit code when the client goes
 * (stdin closed, `stop`) or the upstream ends; the upstream command is stopped either way.
 */
export async function serveStdio(options: ServeOptions): Promise<number> {
  const upstream = await connectUpstream(options.upstream, options.version);
  const closedUpstream = upstreamClosed(upstream);
  const gateway = createMcpGateway({
    hookbus: options.hookbus,
    upstream,
    agentId: options.agentId,
    sessionKey: options.sessionKey ?? randomUUID(),
    logger: options.logger,
    version: options.version,
    ...(options.passThrough === undefined ? {} : { passThrough: options.passThrough }),
  });
  const closedDownstream = new Promise<string>((resolve) => {
    gateway.onclose = () => resolve("client closed");
  });
  const client = downstreamGone(options.launchers ?? readLaunchers());
  await gateway.connect(new StdioServerTransport());
  const ended = await Promise.race([
    closedDownstream,
    client.gone,
    (options.stop ?? new Promise<never>(() => undefined)).then(() => "stopped"),
    closedUpstream.then(() => "upstream" as const),
  ]);
  client.dispose();
  options.logger.info({ why: ended }, "MCP gateway stopping");
  await gateway.close().catch(() => undefined);
  await upstream.close().catch(() => undefined);
  if (ended === "upstream") {
    options.logger.error({ code: "HOOKBUS_MCP_UPSTREAM" }, "the upstream MCP server exited");
    return 1;
  }
  return 0;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  gateway: Server;
  lastSeen: number;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_HTTP_BODY_BYTES)
      throw new HookbusError(
        "HOOKBUS_LIMIT_EXCEEDED",
        `request body over ${MAX_HTTP_BODY_BYTES} bytes`,
      );
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
}

export interface HttpGateway {
  url: string;
  /** Resolves when the upstream ends. */
  upstreamClosed: Promise<void>;
  close(): Promise<void>;
}

/** The HTTP mode's state: its sessions (one gateway each) and the upstream's tools they share. */
interface HttpSessions {
  sessions: Map<string, Session>;
  upstreamTools: UpstreamTools;
  /** Closes sessions idle for HTTP_SESSION_IDLE_MS. */
  reap: NodeJS.Timeout;
}

/** Sessions on one upstream: its tools/list_changed goes once to every session. */
function httpSessions(upstream: Client): HttpSessions {
  const sessions = new Map<string, Session>();
  const upstreamTools = new UpstreamTools(upstream);
  upstream.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    upstreamTools.invalidate();
    await Promise.allSettled([...sessions.values()].map((s) => s.gateway.sendToolListChanged()));
  });
  const reap = setInterval(() => {
    const cutoff = Date.now() - HTTP_SESSION_IDLE_MS;
    for (const [id, session] of sessions)
      if (session.lastSeen < cutoff) {
        sessions.delete(id);
        void session.transport.close().catch(() => undefined);
      }
  }, 60_000);
  reap.unref();
  return { sessions, upstreamTools, reap };
}

/** A JSON-RPC error answer (unless an answer is already under way). */
function refuse(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/** A new session's transport, with its own gateway; it joins `sessions` once initialized. */
async function openSession(
  options: ServeOptions,
  upstream: Client,
  { sessions, upstreamTools }: HttpSessions,
): Promise<StreamableHTTPServerTransport> {
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sessionId) => {
      sessions.set(sessionId, { transport, gateway, lastSeen: Date.now() });
    },
  });
  transport.onclose = () => {
    if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
  };
  const gateway = createMcpGateway({
    hookbus: options.hookbus,
    upstream,
    agentId: options.agentId,
    // The MCP session id is the hookbus session; it is known once initialize is answered.
    sessionKey: `mcp-${randomUUID()}`,
    logger: options.logger,
    version: options.version,
    forwardToolListChanged: false,
    upstreamTools,
    ...(options.passThrough === undefined ? {} : { passThrough: options.passThrough }),
  });
  await gateway.connect(transport);
  return transport;
}

/** One HTTP request: to its session, or (an initialize) to a new one while there is room. */
async function handleHttpRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: ServeOptions,
  upstream: Client,
  state: HttpSessions,
): Promise<void> {
  if (new URL(req.url ?? "/", "http://x").pathname !== "/mcp")
    return refuse(res, 404, "not found: use /mcp");
  const id = req.headers["mcp-session-id"];
  const existing = typeof id === "string" ? state.sessions.get(id) : undefined;
  if (existing !== undefined) {
    existing.lastSeen = Date.now();
    const body = req.method === "POST" ? await readBody(req) : undefined;
    await existing.transport.handleRequest(req, res, body);
    return;
  }
  if (req.method !== "POST") return refuse(res, 400, "no such session: initialize first");
  if (state.sessions.size >= MAX_HTTP_SESSIONS)
    return refuse(res, 503, `too many sessions (${MAX_HTTP_SESSIONS}): close one or retry later`);
  const body = await readBody(req);
  const transport = await openSession(options, upstream, state);
  await transport.handleRequest(req, res, body);
}

/**
 * A Streamable HTTP endpoint at `http://host:port/mcp`. Each MCP session gets its own gateway
 * (its own session key and tool visibility); all share one upstream connection.
 */
export async function serveHttp(
  options: ServeOptions & { host: string; port: number },
): Promise<HttpGateway> {
  const upstream = await connectUpstream(options.upstream, options.version);
  const closed = upstreamClosed(upstream);
  const state = httpSessions(upstream);
  const http: HttpServer = createServer((req, res) => {
    handleHttpRequest(req, res, options, upstream, state).catch((error: unknown) => {
      options.logger.warn({ err: error }, "MCP HTTP request failed");
      refuse(
        res,
        error instanceof SyntaxError ? 400 : 500,
        error instanceof Error ? error.message : "error",
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const address = http.address() as { port: number };
  return {
    url: `http://${options.host}:${address.port}/mcp`,
    upstreamClosed: closed,
    async close() {
      clearInterval(state.reap);
      await Promise.allSettled([...state.sessions.values()].map((s) => s.transport.close()));
      state.sessions.clear();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await upstream.close().catch(() => undefined);
    },
  };
}
