/** `hookbus worker ./policy.ts [...]`: serve policy modules until SIGTERM/SIGINT, then drain. */
import { HookbusError } from "../../foundation/errors.js";
import { loadPolicyModules } from "../../policy/load-policies.js";
import { DEFAULT_MAX_QUEUED, runPolicy } from "../../worker/runner.js";
import { MemorySessionStateStore } from "../../policy/state/memory-store.js";
import { parseCommand, type Command } from "../command.js";
import { serviceLogger } from "../logger.js";
import { openService, runService } from "../service.js";
import { startWithRetry } from "../start-retry.js";
import { connectWaitMs } from "../../bus/connect.js";
import { HTTP_HELP } from "../../observability/service-http.js";

const HELP = `usage: hookbus worker MODULE [MODULE ...] [options]

Serves every policy the modules export (made with definePolicy; TypeScript or JavaScript) until
SIGTERM/SIGINT, then drains: in-flight calls are answered before it exits. Start more processes
with the same modules to scale a policy.

options:
  --concurrency N     handlers running at once in this process (default 64)
  --max-queued N      requests waiting for a free handler; beyond it new ones are answered
                      HOOKBUS_WORKER_OVERLOADED at once and the coordinator applies the
                      policy's failure mode (env HOOKBUS_WORKER_MAX_QUEUED, default ${DEFAULT_MAX_QUEUED})
  --log-level LEVEL   fatal|error|warn|info|debug|trace|silent (env LOG_LEVEL, default info);
                      logs are NDJSON on stdout
  --connect-wait MS   keep retrying an unreachable NATS server (or a JetStream that does not
                      answer yet) this long at start, logging each attempt
                      (env HOOKBUS_CONNECT_WAIT_MS, default 30000; 0 = try once)
  --state kv|memory   where session state lives (default kv: shared by all workers, kept across restarts)
  --seal-state        seal session state under keys the coordinators hand out; they must run
                      with --encrypt (env HOOKBUS_SEAL_STATE=1; docs/privacy.md)
${HTTP_HELP}`;

/** The checked --concurrency, --max-queued and --state (undefined: the runner's default). */
function workerSettings(values: {
  concurrency?: string | undefined;
  "max-queued"?: string | undefined;
  state?: string | undefined;
}): { concurrency: number | undefined; maxQueued: number | undefined } {
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--concurrency must be a positive integer, got ${values.concurrency}`,
      {
        argument: "concurrency",
      },
    );
  }
  const maxQueuedRaw = values["max-queued"] ?? process.env.HOOKBUS_WORKER_MAX_QUEUED;
  const maxQueued =
    maxQueuedRaw === undefined || maxQueuedRaw === "" ? undefined : Number(maxQueuedRaw);
  if (maxQueued !== undefined && (!Number.isInteger(maxQueued) || maxQueued < 1)) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--max-queued (or HOOKBUS_WORKER_MAX_QUEUED) must be a positive integer, got ${maxQueuedRaw}`,
      { argument: "max-queued" },
    );
  }
  if (values.state !== undefined && values.state !== "kv" && values.state !== "memory") {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--state must be kv or memory, got ${values.state}`,
      { argument: "state" },
    );
  }
  return { concurrency, maxQueued };
}

export const workerCommand: Command = {
  summary: "serve policy modules (hookbus worker ./my-policy.ts)",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      concurrency: { type: "string" },
      "max-queued": { type: "string" },
      "log-level": { type: "string" },
      "connect-wait": { type: "string" },
      http: { type: "string" },
      state: { type: "string" },
      "seal-state": { type: "boolean" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (positionals.length === 0) {
      out.error(HELP);
      return 2;
    }
    const { concurrency, maxQueued } = workerSettings(values);
    const loaded = await loadPolicyModules(positionals);
    const logger = serviceLogger(values["log-level"]);
    const { nc, http } = await openService(
      values,
      `hookbus-worker ${loaded.map((l) => l.policy.name).join(",")}`,
      logger,
    );
    return runService({
      nc,
      logger,
      http,
      start: async () => {
        // runPolicy stops what it started when it fails, so a JetStream that does not answer
        // yet (a node restarting) is retried like NATS itself.
        const runner = await startWithRetry(
          () =>
            runPolicy(
              loaded.map((l) => l.policy),
              {
                nc,
                logger,
                ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
                ...(concurrency === undefined ? {} : { concurrency }),
                ...(maxQueued === undefined ? {} : { maxQueued }),
                ...(values.state === "memory" ? { state: new MemorySessionStateStore() } : {}),
                ...(values["seal-state"] === true || process.env.HOOKBUS_SEAL_STATE === "1"
                  ? { sealState: true }
                  : {}),
              },
            ),
          { waitMs: connectWaitMs(values["connect-wait"]), logger, what: "worker start" },
        );
        logger.info(
          {
            policies: loaded.map((l) => ({
              name: l.policy.name,
              version: l.policy.version,
              hooks: l.policy.hookNames,
              from: l.path,
            })),
          },
          "worker ready",
        );
        return runner;
      },
      stop: (runner) => runner.stop(),
    });
  },
};
