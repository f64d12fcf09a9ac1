/**
 * `hookbus claude-code-daemon`: the long-lived side of the fast Claude Code hook. The per-event
 * client (bin/claude-code-hook.mjs) starts it on first use; it holds one NATS connection and one
 * HookbusClient and answers hook events over a Unix socket with the same decision code as
 * `hookbus claude-code-hook` (src/adapters/claude-code/run.ts).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { startHookDaemon } from "../../adapters/claude-code/daemon.js";
import { replyToHook } from "../../adapters/claude-code/run.js";
import { HookbusClient } from "../../agent/client.js";
import { connectNats } from "../../bus/connect.js";
import { beforeDeadline } from "../../foundation/deadline.js";
import { HookbusError } from "../../foundation/errors.js";
import { parseCommand, type Command, type CommonFlags } from "../command.js";
import { serviceLogger } from "../logger.js";
import { onShutdown } from "../shutdown.js";

const HELP = `usage: hookbus claude-code-daemon --socket PATH [--idle-exit-ms MS] [--max-connections N]

The daemon behind the fast Claude Code hook (hookbus-claude-code-hook, docs/adapters/claude-code.md).
You do not start it: the hook starts it on first use, with --socket and its connection settings,
and it logs to the file next to the socket (PATH with .log). It exits after --idle-exit-ms without
an event, on SIGTERM, or when another daemon took over its socket.

options:
  --socket PATH          the Unix socket to serve (its folder must be yours, mode 0700)
  --idle-exit-ms MS      exit after this long without an event (env HOOKBUS_CLAUDE_CODE_IDLE_EXIT_MS,
                         default 1800000: 30 minutes)
  --max-connections N    events served at once; more are answered closed (default 64)
  --log-level LEVEL      (env LOG_LEVEL, default info)`;

const DEFAULT_IDLE_EXIT_MS = 30 * 60_000;
const DEFAULT_MAX_CONNECTIONS = 64;
/** The fast hook's --timeout-ms is at most this, as `hookbus claude-code-hook`'s. */
const MAX_REQUEST_MS = 120_000;
const RECEIVE_TIMEOUT_MS = 10_000;

function intFlag(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--${name} must be an integer of at least ${min}, got ${JSON.stringify(value)}`,
      { argument: name },
    );
  return n;
}

/**
 * One NATS connection and HookbusClient for every event, made on the first event that needs it.
 * A failed attempt is forgotten, so the next event tries again (NATS may be back by then).
 */
function sharedClient(flags: CommonFlags, logger: Logger) {
  let connecting: Promise<{ nc: NatsConnection; client: HookbusClient }> | undefined;

  const connect = async () => {
    const nc = await connectNats({ ...flags, name: "hookbus-claude-code-daemon" });
    try {
      const client = await HookbusClient.connect({
        nc,
        ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }),
        logger,
      });
      // Closed for good (not a reconnect): the next event connects afresh.
      void nc.closed().then(() => (connecting = undefined));
      logger.info("connected to NATS");
      return { nc, client };
    } catch (error) {
      // The connect's error is the one to report.
      await nc.close().catch(() => undefined);
      throw error;
    }
  };

  return {
    get(deadline: number): Promise<HookbusClient> {
      const attempt = (connecting ??= connect());
      attempt.catch((error: unknown) => {
        if (connecting === attempt) connecting = undefined;
        logger.warn({ err: error }, "connecting to hookbus failed");
      });
      return beforeDeadline(
        attempt.then((c) => c.client),
        deadline,
        "HOOKBUS_CALL_TIMEOUT",
        () => "connecting to NATS did not finish before the hook's deadline",
      );
    },
    async close(): Promise<void> {
      // A connect that failed was logged when it failed; closing is best effort on the way out.
      const current = await connecting?.catch(() => undefined);
      await current?.client.close().catch(() => undefined);
      await current?.nc.close().catch(() => undefined);
    },
  };
}

export const claudeCodeDaemonCommand: Command = {
  summary: "the daemon behind the fast Claude Code hook (started by the hook itself)",
  async run(argv, out) {
    const { values } = parseCommand(argv, {
      socket: { type: "string" },
      "idle-exit-ms": { type: "string" },
      "max-connections": { type: "string" },
      "log-level": { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (values.socket === undefined)
      throw new HookbusError("HOOKBUS_USAGE", "--socket PATH is required");
    const logger = serviceLogger(values["log-level"]);
    const shared = sharedClient(values, logger);
    const daemon = await startHookDaemon({
      socketPath: values.socket,
      logger,
      maxConnections: intFlag(
        "max-connections",
        values["max-connections"],
        DEFAULT_MAX_CONNECTIONS,
        1,
      ),
      maxRequestMs: MAX_REQUEST_MS,
      receiveTimeoutMs: RECEIVE_TIMEOUT_MS,
      idleExitMs: intFlag(
        "idle-exit-ms",
        values["idle-exit-ms"] ?? process.env.HOOKBUS_CLAUDE_CODE_IDLE_EXIT_MS,
        DEFAULT_IDLE_EXIT_MS,
        100,
      ),
      answer: (request) =>
        replyToHook(
          request.text,
          { agentId: request.agentId, rewriteDecision: request.rewrite },
          request.deadline,
          (deadline) => shared.get(deadline),
        ),
    });
    if (daemon === "running") {
      logger.info({ socket: values.socket }, "a daemon already serves this socket");
      return 0;
    }
    void onShutdown(logger, async () => {
      await daemon.stop("stopped");
    });
    await daemon.stopped;
    await shared.close();
    return 0;
  },
};
