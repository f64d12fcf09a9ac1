/**
 * `hookbus claude-code-hook`: a Claude Code command hook. Reads Claude Code's hook JSON on stdin,
 * asks hookbus, and prints Claude Code's decision JSON. Gates fail closed: when NATS or a
 * coordinator cannot be reached, a tool call is denied, a prompt refused, MCP output withheld.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { MAX_HOOK_INPUT_BYTES } from "../../adapters/claude-code/input.js";
import {
  blockingReply,
  replyToHook,
  type HookReply,
  type MappingOptions,
} from "../../adapters/claude-code/run.js";
import { HookbusClient } from "../../agent/client.js";
import { beforeDeadline } from "../../foundation/deadline.js";
import { HookbusError } from "../../foundation/errors.js";
import { parseCommand, type Command, type CommonFlags } from "../command.js";
import { connectNats } from "../../bus/connect.js";
import type { Output } from "../output.js";

const HELP = `usage: hookbus claude-code-hook [--agent ID] [--rewrite allow|ask] [--timeout-ms MS]

A Claude Code command hook (docs/adapters/claude-code.md): reads the hook's JSON on stdin, asks hookbus,
prints Claude Code's decision JSON on stdout and exits 0.

  PreToolUse        -> before_tool_call       deny, or rewrite the input (updatedInput)
  PostToolUse       -> before_tool_result     for MCP tools (mcp__*): replace or withhold output
                    -> after_tool_call        for built-in tools (observed)
  PostToolUseFailure-> after_tool_call        (observed, with the error)
  UserPromptSubmit  -> before_agent_reply     refuse the prompt, showing the reply
  Stop              -> before_response_emit   refuse the answer; Claude continues with the reason
  SessionStart/End  -> session_start/_end     (observed)

Gates fail closed: when hookbus cannot decide, the tool call is denied, the prompt refused and
MCP output withheld. Input that is not a Claude Code hook payload exits 2 (Claude Code shows
stderr to the model and blocks the action).

options:
  --agent ID        the agent id to call as (env HOOKBUS_AGENT_ID, default claude-code); NATS
                    permissions bind it to the user of --creds/--nkey
  --rewrite MODE    a call whose input a policy rewrote: allow (run it without Claude Code's
                    permission prompt; its deny/ask rules still apply) or ask (default allow)
  --timeout-ms MS   the whole hook's deadline: connect and decide (default 10000, 100-120000);
                    keep it below the hook's "timeout" in Claude Code's settings`;

export const DEFAULT_HOOK_TIMEOUT_MS = 10_000;

/** Stdin, refused past the limit rather than buffered without bound. */
async function readStdin(limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit)
      throw new HookbusError(
        "HOOKBUS_LIMIT_EXCEEDED",
        `the hook input is larger than ${limit} bytes`,
        { limit: "claudeCodeHookInputBytes" },
      );
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function timeoutFlag(value: string | undefined): number {
  if (value === undefined) return DEFAULT_HOOK_TIMEOUT_MS;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 100 || ms > 120_000)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--timeout-ms must be 100-120000 milliseconds, got ${JSON.stringify(value)}`,
      { argument: "timeout-ms" },
    );
  return ms;
}

export function rewriteFlag(value: string | undefined): "allow" | "ask" {
  if (value === undefined || value === "allow" || value === "ask") return value ?? "allow";
  throw new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `--rewrite must be allow or ask, got ${JSON.stringify(value)}`,
    { argument: "rewrite" },
  );
}

function print(out: Output, reply: HookReply): number {
  if (reply.stdout !== "") out.print(reply.stdout.trimEnd());
  if (reply.stderr !== "") out.error(reply.stderr.trimEnd());
  return reply.exitCode;
}

/** One connection for this one event, closed by `close` whatever happened. */
function oneShotClient(flags: CommonFlags) {
  let nc: NatsConnection | undefined;
  let client: HookbusClient | undefined;
  return {
    async open(deadline: number): Promise<HookbusClient> {
      nc = await beforeDeadline(
        connectNats(flags),
        deadline,
        "HOOKBUS_CALL_TIMEOUT",
        () => "connecting to NATS did not finish before the hook's deadline",
      );
      client = await beforeDeadline(
        HookbusClient.connect({
          nc,
          ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }),
          timeoutMs: Math.max(1, deadline - Date.now()),
        }),
        deadline,
        "HOOKBUS_CALL_TIMEOUT",
        () => "reading the registry did not finish before the hook's deadline",
      );
      return client;
    },
    async close(): Promise<void> {
      // Best effort: the hook has answered Claude Code already and exits either way.
      await client?.close().catch(() => undefined);
      await nc?.close().catch(() => undefined);
    },
  };
}

export const claudeCodeHookCommand: Command = {
  summary: "a Claude Code command hook: hook JSON on stdin, decision JSON on stdout",
  async run(argv, out) {
    const { values } = parseCommand(argv, {
      agent: { type: "string" },
      rewrite: { type: "string" },
      "timeout-ms": { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    const deadline = Date.now() + timeoutFlag(values["timeout-ms"]);
    const options: MappingOptions = {
      agentId: values.agent ?? process.env.HOOKBUS_AGENT_ID ?? "claude-code",
      rewriteDecision: rewriteFlag(values.rewrite),
    };
    let text: string;
    try {
      text = await readStdin(MAX_HOOK_INPUT_BYTES);
    } catch (error) {
      // Oversized or unreadable: exit 2, never 1 (Claude Code would let the action go on).
      const coded =
        error instanceof HookbusError
          ? error
          : new HookbusError(
              "HOOKBUS_BAD_MESSAGE",
              `cannot read the hook input on stdin: ${(error as Error).message}`,
            );
      return print(out, blockingReply(coded));
    }
    const connection = oneShotClient(values);
    try {
      return print(out, await replyToHook(text, options, deadline, (d) => connection.open(d)));
    } finally {
      await connection.close();
    }
  },
};
