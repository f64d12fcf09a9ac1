/**
 * `hookbus mcp-proxy -- <server command>`: an MCP gateway. The MCP client talks to this process
 * (stdio, or Streamable HTTP with --http); every tool call goes through hookbus before and after
 * the upstream server runs it (src/adapters/mcp/gateway.ts).
 */
import { HookbusClient } from "../../agent/client.js";
import { HookbusError } from "../../foundation/errors.js";
import { commaList, parseCommand, type Command } from "../command.js";
import { connectNats, type ConnectionFlags } from "../../bus/connect.js";
import { HookbusConnection, type OpenedHookbus } from "../../adapters/mcp/hookbus-connection.js";
import type { Logger } from "pino";
import { serviceLogger } from "../logger.js";
import { HOOKBUS_VERSION } from "../../observability/version.js";
import { importPeer } from "../../adapters/core/peer.js";
import { readLaunchers } from "../../adapters/mcp/launcher.js";
// Types only (erased): the module itself is imported on demand, it needs the MCP SDK.
import type * as ServeModuleTypes from "../../adapters/mcp/serve.js";

type ServeModule = typeof ServeModuleTypes;

const HELP = `usage: hookbus mcp-proxy [options] -- COMMAND [ARGS...]
       hookbus mcp-proxy [options] --upstream URL

An MCP gateway in front of another MCP server (the upstream): tools/list is narrowed by policy
(before_llm_call; a hidden tool's calls are refused too), tools/call goes through before_tool_call
(a block is an MCP tool error, params may be rewritten) and its result through before_tool_result
(replaced or withheld); after_tool_call is recorded. Tool gates fail closed. Point any MCP client
(Claude Code, Cursor, an agent SDK) at this command instead of the server (docs/adapters/mcp.md).

options:
  --agent ID          the agent id to call hookbus as (env HOOKBUS_AGENT_ID, default mcp-gateway)
  --session KEY       the hookbus session of the stdio mode (default: a new id per process)
  --upstream URL      the upstream is a Streamable HTTP MCP server, not a command
  --http PORT         serve Streamable HTTP on http://HOST:PORT/mcp instead of stdio (0: any port;
                      the URL is logged); every MCP session is a hookbus session
  --host HOST         the address --http binds (default 127.0.0.1)
  --pass-through LIST also pass resources and/or prompts through, unchecked (default: tools only)
  --timeout-ms MS     each hookbus decision's deadline (default 5000)
  --log-level LEVEL   logs go to stderr (stdout is the MCP channel in stdio mode)`;

function positiveInt(value: string | undefined, name: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--${name} must be an integer 0-${max}, got ${JSON.stringify(value)}`,
      {
        argument: name,
      },
    );
  return n;
}

/** NATS and the hookbus client, both closed again if the client cannot start. */
async function openHookbus(
  values: ConnectionFlags & { namespace?: string | undefined },
  timeoutMs: number | undefined,
  logger: Logger,
): Promise<OpenedHookbus> {
  const nc = await connectNats({ ...values, name: "hookbus-mcp-proxy" });
  try {
    const hookbus = await HookbusClient.connect({
      nc,
      logger,
      ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
    return {
      hookbus,
      async close() {
        // Best effort on the way out: the proxy exits whatever closing says.
        await hookbus.close().catch(() => undefined);
        await nc.close().catch(() => undefined);
      },
    };
  } catch (error) {
    // The connect's error is the one to report.
    await nc.close().catch(() => undefined);
    throw error;
  }
}

/** SIGTERM, SIGINT and SIGHUP (a host closing its terminal) all stop the gateway and its upstream. */
function stopSignal(): { signalled: Promise<NodeJS.Signals>; dispose: () => void } {
  const signals: NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];
  let handler: ((signal: NodeJS.Signals) => void) | undefined;
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    handler = resolve;
    for (const signal of signals) process.once(signal, resolve);
  });
  return {
    signalled,
    dispose: () => {
      for (const signal of signals) if (handler !== undefined) process.off(signal, handler);
    },
  };
}

/**
 * Exit even if something still holds the event loop (stdin stays readable after a signal): the
 * gateway has closed everything it owns by now. Unref'd, so a clean exit is not delayed.
 */
function exitSoonAfter(): void {
  setTimeout(() => process.exit(), 2_000).unref();
  process.stdin.destroy();
}

/** The adapter needs the MCP SDK, an optional peer dependency: load it only here. */
function loadServe(): Promise<ServeModule> {
  return importPeer(
    "@modelcontextprotocol/sdk",
    "hookbus mcp-proxy",
    () => import("../../adapters/mcp/serve.js"),
  );
}

export const mcpProxyCommand: Command = {
  summary: "an MCP gateway: put an MCP server's tools behind hookbus policies",
  async run(argv, out) {
    // Before anything slow: npx killed while this process starts must still be seen (launcher.ts).
    const launchers = readLaunchers();
    const dashes = argv.indexOf("--");
    const own = dashes === -1 ? argv : argv.slice(0, dashes);
    const command = dashes === -1 ? [] : argv.slice(dashes + 1);
    const { values } = parseCommand(own, {
      agent: { type: "string" },
      session: { type: "string" },
      upstream: { type: "string" },
      http: { type: "string" },
      host: { type: "string" },
      "pass-through": { type: "string", multiple: true },
      "timeout-ms": { type: "string" },
      "log-level": { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if ((command.length === 0) === (values.upstream === undefined))
      throw new HookbusError(
        "HOOKBUS_USAGE",
        "hookbus mcp-proxy takes the upstream server as `-- COMMAND [ARGS...]` or `--upstream URL` (one of them)",
      );
    const passThrough = commaList(values["pass-through"]);
    for (const p of passThrough)
      if (p !== "resources" && p !== "prompts")
        throw new HookbusError(
          "HOOKBUS_INVALID_ARGUMENT",
          `--pass-through takes resources and/or prompts, not ${JSON.stringify(p)}`,
          {
            argument: "pass-through",
          },
        );
    const port = positiveInt(values.http, "http", 65_535);
    const timeoutMs = positiveInt(values["timeout-ms"], "timeout-ms", 600_000);
    // stdout is the MCP channel in stdio mode: logs go to stderr.
    const logger = serviceLogger(values["log-level"], process.env, 2);
    const serve = await loadServe();
    const connection = new HookbusConnection(() => openHookbus(values, timeoutMs, logger), logger);
    const stop = stopSignal();
    const options = {
      hookbus: connection.current,
      stop: stop.signalled,
      upstream:
        values.upstream !== undefined
          ? { url: values.upstream }
          : { command: command[0]!, args: command.slice(1) },
      agentId: values.agent ?? process.env.HOOKBUS_AGENT_ID ?? "mcp-gateway",
      passThrough: passThrough as Array<"resources" | "prompts">,
      logger,
      version: HOOKBUS_VERSION,
      launchers,
      ...(values.session === undefined ? {} : { sessionKey: values.session }),
    };
    try {
      if (port === undefined) return await serve.serveStdio(options);
      const http = await serve.serveHttp({ ...options, host: values.host ?? "127.0.0.1", port });
      logger.info({ url: http.url }, `MCP gateway listening on ${http.url}`);
      const why = await Promise.race([
        stop.signalled.then(() => "signal" as const),
        http.upstreamClosed.then(() => "upstream" as const),
      ]);
      await http.close();
      return why === "upstream" ? 1 : 0;
    } finally {
      stop.dispose();
      await connection.close();
      exitSoonAfter();
    }
  },
};
