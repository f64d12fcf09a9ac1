/**
 * The OpenClaw plugin: registers OpenClaw's hooks and answers them through hookbus.
 *
 * OpenClaw loads a plugin module more than once in one process (2026.9 `agent --local` loads it
 * three times and calls `register` each time), so the client is the process's, found through
 * `sharedHookbusClient` by server and namespace: one connection, one after_llm_call gate. It
 * connects on the first hook, not in `register` (which OpenClaw requires to be synchronous).
 *
 * Gates fail closed: when hookbus cannot decide (NATS or the coordinator down, a deadline
 * missed, an event over a limit), the tool call is blocked, its result withheld, the reply not
 * delivered, the message answered with why instead of reaching the agent. Observations never
 * delay or fail OpenClaw: their failures are logged.
 */
import { HookbusClient } from "../../agent/client.js";
import { connectNats } from "../../bus/connect.js";
import { HookbusError, isHookbusError } from "../../foundation/errors.js";
import type { NatsConnection } from "@nats-io/transport-node";
import { closeSharedHookbusClient, sharedHookbusClient } from "../core/shared-client.js";
import { parsePluginConfig, type OpenClawPluginConfig } from "./config.js";
import type { OpenClawHookContext, OpenClawPluginApi } from "./host.js";
import {
  answerAgentReply,
  answerMessageSending,
  answerToolCall,
  answerToolResult,
  failAgentReply,
  failMessageSending,
  failToolCall,
  failToolResult,
  runContext,
} from "./mapping.js";
import {
  agentEndEvent,
  llmInputEvent,
  llmOutputEvent,
  sessionContext,
  sessionEndEvent,
  sessionStartEvent,
} from "./observations.js";

export const OPENCLAW_PLUGIN_ID = "hookbus";

function asHookbusError(error: unknown): HookbusError {
  if (isHookbusError(error)) return error;
  return new HookbusError(
    "HOOKBUS_COORDINATOR_UNAVAILABLE",
    error instanceof Error ? error.message : String(error),
  );
}

/** The key of the process's client for these settings: the server, namespace and agent. */
export function clientKey(config: OpenClawPluginConfig): string {
  const server = config.server ?? process.env.NATS_URL ?? "";
  return `openclaw:${server}:${namespaceOf(config) ?? ""}:${config.agentId}`;
}

/** The namespace setting, else HOOKBUS_NAMESPACE as the CLI reads it, else the library's default. */
function namespaceOf(config: OpenClawPluginConfig): string | undefined {
  return config.namespace ?? (process.env.HOOKBUS_NAMESPACE || undefined);
}

/** The NATS connections under the shared clients, per process like the clients themselves. */
const CONNECTIONS = Symbol.for("hookbus.adapters.openclaw.connections.v1");
function connections(): Map<string, NatsConnection> {
  const holder = globalThis as { [CONNECTIONS]?: Map<string, NatsConnection> };
  holder[CONNECTIONS] ??= new Map();
  return holder[CONNECTIONS];
}

function clientFor(
  config: OpenClawPluginConfig,
  info: (message: string) => void,
): Promise<HookbusClient> {
  const key = clientKey(config);
  return sharedHookbusClient(key, async () => {
    const nc = await connectNats({
      server: config.server,
      creds: config.creds,
      nkey: config.nkey,
      "inbox-prefix": config.inboxPrefix,
      name: `hookbus-openclaw-${config.agentId}`,
    });
    try {
      const client = await HookbusClient.connect({
        nc,
        ...(namespaceOf(config) === undefined ? {} : { namespace: namespaceOf(config) }),
        timeoutMs: config.timeoutMs,
      });
      connections().set(key, nc);
      info(`connected to NATS as agent ${config.agentId} (pid ${process.pid})`);
      return client;
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
  });
}

/**
 * Close the process's client for these settings and its NATS connection, after its in-flight
 * observations (the plugin does this at OpenClaw's gateway_stop).
 */
export async function closeOpenClawClient(raw: unknown): Promise<void> {
  const key = clientKey(parsePluginConfig(raw));
  await closeSharedHookbusClient(key);
  const nc = connections().get(key);
  connections().delete(key);
  await nc?.close();
}

type ObservedHook =
  "after_tool_call" | "llm_input" | "llm_output" | "agent_end" | "session_start" | "session_end";

/** What every hook of one registration shares: the settings, the client, logging. */
interface PluginScope {
  agentId: string;
  warn: (message: string) => void;
  /** The process's client for these settings (connected on first use). */
  client: () => Promise<HookbusClient>;
  /** Record an observation; its failure is logged, never thrown. */
  observe: (
    hook: ObservedHook,
    context: ReturnType<typeof runContext>,
    event: Record<string, unknown>,
  ) => Promise<void>;
}

function pluginScope(api: OpenClawPluginApi): PluginScope {
  const config = parsePluginConfig(api.pluginConfig);
  const warn = (message: string) => (api.logger?.warn ?? console.warn)(`hookbus: ${message}`);
  const info = (message: string) => (api.logger?.info ?? console.error)(`hookbus: ${message}`);
  const client = () => clientFor(config, info);
  const observe: PluginScope["observe"] = (hook, context, event) =>
    client()
      .then((c) => c.observe(hook, context, event as never))
      .then(
        () => undefined,
        (error: unknown) => warn(`${hook} not recorded: ${asHookbusError(error).message}`),
      );
  return { agentId: config.agentId, warn, client, observe };
}

/** Register hookbus's hooks on OpenClaw's plugin API (OpenClaw's `register(api)`). */
export function registerHookbus(api: OpenClawPluginApi): void {
  const scope = pluginScope(api);
  gateAgentReply(api, scope);
  gateToolCall(api, scope);
  gateToolResult(api, scope);
  observeToolCall(api, scope);
  gateMessageSending(api, scope);
  observeRun(api, scope);
  observeSessions(api, scope);
  api.on("gateway_stop", async () => {
    await closeOpenClawClient(api.pluginConfig).catch((error: unknown) =>
      scope.warn(`closing: ${asHookbusError(error).message}`),
    );
  });
}

function gateAgentReply(api: OpenClawPluginApi, { agentId, client }: PluginScope): void {
  api.on("before_agent_reply", async (event, ctx) => {
    try {
      const decision = await (
        await client()
      ).decide("before_agent_reply", runContext(agentId, ctx), { cleanedBody: event.cleanedBody });
      return answerAgentReply(decision);
    } catch (error) {
      return failAgentReply(asHookbusError(error));
    }
  });
}

function gateToolCall(api: OpenClawPluginApi, { agentId, client }: PluginScope): void {
  api.on("before_tool_call", async (event, ctx) => {
    const context = toolContext(agentId, ctx, event.toolName, event.toolCallId, event.runId);
    try {
      const decision = await (
        await client()
      ).decide("before_tool_call", context, {
        toolName: event.toolName,
        ...(event.toolCallId === undefined ? {} : { toolCallId: event.toolCallId }),
        params: event.params,
      });
      return answerToolCall(event.params, decision);
    } catch (error) {
      return failToolCall(asHookbusError(error));
    }
  });
}

function gateToolResult(api: OpenClawPluginApi, { agentId, client }: PluginScope): void {
  api.registerAgentToolResultMiddleware?.(
    async (event, ctx) => {
      const context = toolContext(agentId, ctx, event.toolName, event.toolCallId);
      try {
        const decision = await (
          await client()
        ).decide("before_tool_result", context, {
          toolName: event.toolName,
          toolCallId: event.toolCallId,
          params: event.args,
          result: event.result,
          isError: event.isError === true,
        });
        return answerToolResult(decision);
      } catch (error) {
        return failToolResult(asHookbusError(error));
      }
    },
    { runtimes: ["openclaw"] },
  );
}

function observeToolCall(api: OpenClawPluginApi, { agentId, observe }: PluginScope): void {
  api.on("after_tool_call", (event, ctx) => {
    const context = toolContext(agentId, ctx, event.toolName, event.toolCallId, event.runId);
    const blocked = isBlockedResult(event.result);
    void observe("after_tool_call", context, {
      toolName: event.toolName,
      ...(event.toolCallId === undefined ? {} : { toolCallId: event.toolCallId }),
      params: event.params,
      ...(event.result === undefined ? {} : { result: event.result }),
      ...(event.error === undefined ? {} : { error: event.error }),
      ...(event.durationMs === undefined ? {} : { durationMs: event.durationMs }),
      ...(blocked === undefined ? {} : { blocked: true, blockReason: blocked }),
    });
  });
}

function gateMessageSending(api: OpenClawPluginApi, { agentId, client }: PluginScope): void {
  api.on("message_sending", async (event, ctx) => {
    const context = {
      ...runContext(agentId, {
        ...(ctx.sessionKey === undefined ? {} : { sessionKey: ctx.sessionKey }),
        ...(ctx.runId === undefined ? {} : { runId: ctx.runId }),
      }),
      channel: ctx.channelId,
    };
    try {
      const decision = await (
        await client()
      ).decide("before_response_emit", context, {
        content: event.content,
        allContent: [event.content],
        channel: ctx.channelId,
      });
      return answerMessageSending(event.content, decision);
    } catch (error) {
      return failMessageSending(asHookbusError(error));
    }
  });
}

/** The model's input and output and the run's end, observed. */
function observeRun(api: OpenClawPluginApi, { agentId, observe }: PluginScope): void {
  api.on("llm_input", (event, ctx) => {
    void observe("llm_input", runContext(agentId, ctx, event.runId), llmInputEvent(event));
  });
  api.on("llm_output", (event, ctx) => {
    void observe("llm_output", runContext(agentId, ctx, event.runId), llmOutputEvent(event));
  });
  api.on("agent_end", (event, ctx) => {
    void observe("agent_end", runContext(agentId, ctx, event.runId), agentEndEvent(event));
  });
}

/** A session's start and end, observed. */
function observeSessions(api: OpenClawPluginApi, { agentId, observe }: PluginScope): void {
  api.on("session_start", (event, ctx) => {
    void observe("session_start", sessionContext(agentId, event, ctx), sessionStartEvent(event));
  });
  api.on("session_end", (event, ctx) => {
    void observe("session_end", sessionContext(agentId, event, ctx), sessionEndEvent(event));
  });
}

function toolContext(
  agentId: string,
  ctx: OpenClawHookContext | undefined,
  toolName: string,
  toolCallId: string | undefined,
  runId?: string,
) {
  return {
    ...runContext(agentId, ctx, runId),
    toolName,
    ...(toolCallId === undefined ? {} : { toolCallId }),
  };
}

/** OpenClaw reports a blocked call to after_tool_call as a result with `details.status: "blocked"`. */
function isBlockedResult(result: unknown): string | undefined {
  const details = (result as { details?: { status?: unknown; reason?: unknown } } | undefined)
    ?.details;
  if (details?.status !== "blocked") return undefined;
  return typeof details.reason === "string" ? details.reason : "blocked";
}

/** The plugin entry OpenClaw loads (the shape of `definePluginEntry`'s argument). */
export const hookbusOpenClawPlugin = {
  id: OPENCLAW_PLUGIN_ID,
  name: "hookbus",
  description:
    "Every tool call, tool result, reply and turn of the agent through hookbus policies (NATS), recorded in its audit log.",
  register: registerHookbus,
};
