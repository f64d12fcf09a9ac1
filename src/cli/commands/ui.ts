/**
 * `hookbus ui`: the audit web UI (read-only), reading the index and, for the live tail, the log
 * over NATS with the auditor's credentials. Binds 127.0.0.1 unless --host says otherwise.
 */
import pino from "pino";
import { Bus } from "../../bus/bus.js";
import { HookbusError } from "../../foundation/errors.js";
import { openAuditSource } from "../../audit/source.js";
import { requireIndexUrl } from "../../audit/pg/url.js";
import { startUiServer } from "../../ui/server.js";
import { parseCommand, type Command } from "../command.js";
import { connectNats } from "../../bus/connect.js";
import { onShutdown } from "../shutdown.js";

const HELP = `usage: hookbus ui --index URL [--host H] [--port N] [--creds FILE | --nkey FILE]

The audit web UI, read-only: search with the index's filters, session timelines, each decision's
event, verdicts and merged decision side by side, a live tail of the log, replay reports
(\`hookbus replay … --json\`), and charts (records per minute by outcome, latency per policy).

  --index URL       postgres://… (env HOOKBUS_INDEX_URL), kept by \`hookbus indexer\`
  --host H          address to bind (default 127.0.0.1; anything else exposes the audit log)
  --port N          port (default 8090; 0 picks a free one)
  --max-tails N     live tails open at once (default 16)
connection (the live tail reads the log): --server URL (env NATS_URL), --creds FILE or
  --nkey FILE (the auditor's, from \`hookbus auth\`), --namespace NS (env HOOKBUS_NAMESPACE)
See docs/ui.md.`;

function intFlag(
  value: string | undefined,
  name: string,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
      { argument: `--${name}` },
    );
  return Number(value);
}

export const uiCommand: Command = {
  summary: "the audit web UI (read-only; search, sessions, decisions, live tail, replay reports)",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      index: { type: "string" },
      host: { type: "string" },
      port: { type: "string" },
      "max-tails": { type: "string" },
      "log-level": { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (positionals.length > 0) {
      out.error(`unexpected argument "${positionals[0]}"\n\n${HELP}`);
      return 2;
    }
    const url = requireIndexUrl(values.index);
    const port = intFlag(values.port, "port", 0, 65535) ?? 8090;
    const maxTails = intFlag(values["max-tails"], "max-tails", 1, 1000);
    const logger = pino({ level: values["log-level"] ?? process.env.LOG_LEVEL ?? "info" });
    const source = await openAuditSource({
      indexUrl: url,
      namespace: values.namespace,
      pool: { max: 4, applicationName: "hookbus-ui" },
      checkSchema: true,
    });
    try {
      const nc = await connectNats({ ...values, name: "hookbus-ui" });
      try {
        const bus = await Bus.open(nc, {
          logger,
          ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
        });
        const server = await startUiServer({
          source,
          bus,
          natsUrl: values.server ?? process.env.NATS_URL ?? "nats://127.0.0.1:4222",
          host: values.host ?? "127.0.0.1",
          port,
          logger,
          ...(maxTails === undefined ? {} : { maxTails }),
        });
        out.print(`hookbus ui: ${server.url}/ (read-only; Ctrl-C stops it)`);
        await onShutdown(logger, () => server.close());
        return 0;
      } finally {
        // Best effort on the way out: the UI serves nothing more either way.
        await nc.drain().catch(() => {});
      }
    } finally {
      await source.close();
    }
  },
};
