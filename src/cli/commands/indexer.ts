/** `hookbus indexer`: project the log into PostgreSQL; `hookbus indexer migrate`: create/upgrade its schema. */
import { pino, type Logger } from "pino";
import type { NatsConnection } from "@nats-io/transport-node";
import { Bus } from "../../bus/bus.js";
import { HTTP_HELP } from "../../observability/service-http.js";
import { JetStreamApiError } from "@nats-io/jetstream";
import { connectWaitMs } from "../../bus/connect.js";
import { HookbusError, isHookbusError } from "../../foundation/errors.js";
import {
  createIndexDatabase,
  databaseOf,
  indexerTelemetry,
  isMissingDatabase,
  migrateIndex,
  missingDatabase,
  startIndexer,
  type IndexerOptions,
  type MigrateResult,
} from "../../indexer/service.js";
import { openIndexPool } from "../../audit/pg/pool.js";
import { requireIndexUrl } from "../../audit/pg/url.js";
import { parseCommand, type Command } from "../command.js";
import type { Output } from "../output.js";
import { openService, runService } from "../service.js";
import { isTransientJetStreamFailure, startWithRetry } from "../start-retry.js";

const HELP = `usage: hookbus indexer [options]          run an indexer until SIGTERM/SIGINT
       hookbus indexer migrate [--index URL] [--no-create-database]
                                         create or upgrade the index's schema, then exit; a
                                         database that does not exist is created first when
                                         the URL's user may (or the error says how)

The indexer is a durable consumer of the log that writes every record into PostgreSQL (one row
per record, keyed by stream sequence), acking only after the write committed. Run several for
availability: they share the consumer and never write a record twice.

options:
  --index URL         postgres://… (env HOOKBUS_INDEX_URL)
  --consumer NAME     durable consumer shared by the namespace's indexers (default <ns>-indexer)
  --batch N           records per transaction (default 1000, at most 10000)
  --writers N         batches written at once, each in its own transaction (default 2, at most 16)
  --ack-wait MS       redelivery delay of unacked records, when the consumer is created (default
                      30000); a starting indexer has what a dead one held redelivered at once
  --log-level LEVEL   pino level (env LOG_LEVEL, default info); logs are NDJSON on stdout
${HTTP_HELP}
                      (/metrics has hookbus_indexer_lag_records and hookbus_indexer_lag_seconds;
                      /readyz fails while NATS is down or index writes fail)
  --connect-wait MS   keep retrying an unreachable NATS server this long at start (env
                      HOOKBUS_CONNECT_WAIT_MS, default 30000)
connection: --server URL (env NATS_URL), --creds FILE (env NATS_CREDS),
            --namespace NS (env HOOKBUS_NAMESPACE, default hookbus)`;

function intFlag(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--${name} must be a positive whole number, got ${JSON.stringify(value)}`,
      { argument: `--${name}` },
    );
  return Number(value);
}

async function migrate(argv: string[], out: Output): Promise<number> {
  const { values } = parseCommand(argv, {
    index: { type: "string" },
    "no-create-database": { type: "boolean" },
  });
  if (values.help === true) {
    out.print(HELP);
    return 0;
  }
  const url = requireIndexUrl(values.index);
  let result: MigrateResult;
  try {
    result = await migrateOnce(url);
  } catch (error) {
    if (!isMissingDatabase(error)) throw error;
    if (values["no-create-database"] === true) throw missingDatabase(url, error);
    const created = await createIndexDatabase(url);
    if (created) out.print(`created database "${databaseOf(url)}"`);
    result = await migrateOnce(url);
  }
  out.print(
    result.applied.length === 0
      ? `index schema is up to date (version ${result.version})`
      : `applied migration${result.applied.length === 1 ? "" : "s"} ${result.applied.join(", ")}; index schema version ${result.version}`,
  );
  return 0;
}

async function migrateOnce(url: string): Promise<MigrateResult> {
  const pool = openIndexPool(url, { max: 1 });
  try {
    return await migrateIndex(pool);
  } finally {
    await pool.end();
  }
}

/**
 * Like the coordinator, worker and sealer: a start that meets an election, a cut PostgreSQL
 * connection or a log no coordinator has created yet waits, up to --connect-wait, instead of
 * exiting.
 */
function startIndexerWithRetry(
  nc: NatsConnection,
  options: Omit<IndexerOptions, "bus">,
  retry: { connectWait: string | undefined; namespace: string | undefined; logger: Logger },
) {
  // Opening the bus asks JetStream for the account (`$JS.API.INFO`): a restart that meets a
  // server still busy must retry that too, not exit with a timeout.
  const start = async () => {
    const bus = await Bus.open(nc, {
      logger: retry.logger,
      ...(retry.namespace === undefined ? {} : { namespace: retry.namespace }),
    });
    return startIndexer({ ...options, bus });
  };
  return startWithRetry(start, {
    waitMs: connectWaitMs(retry.connectWait),
    logger: retry.logger,
    what: "indexer start",
    retryable: isPassingIndexerStartFailure,
  });
}

/** JetStream not answering yet, the log not created yet, PostgreSQL unreachable for now. */
function isPassingIndexerStartFailure(error: unknown): boolean {
  if (isTransientJetStreamFailure(error)) return true;
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    if (e instanceof JetStreamApiError && e.code === STREAM_NOT_FOUND) return true;
    e = e.cause;
  }
  // A missing database stays missing: exit at once and say how to create it.
  return isHookbusError(error, "HOOKBUS_INDEX_UNAVAILABLE") && !isMissingDatabase(error);
}

/** JetStream's error code for a stream that does not exist (the log before any coordinator). */
const STREAM_NOT_FOUND = 10059;

export const indexerCommand: Command = {
  summary: "project the log into PostgreSQL for audit queries (indexer migrate: its schema)",
  async run(argv, out) {
    if (argv[0] === "migrate") return migrate(argv.slice(1), out);
    const { values, positionals } = parseCommand(argv, {
      index: { type: "string" },
      consumer: { type: "string" },
      batch: { type: "string" },
      "ack-wait": { type: "string" },
      writers: { type: "string" },
      "log-level": { type: "string" },
      http: { type: "string" },
      "connect-wait": { type: "string" },
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
    const batchSize = intFlag(values.batch, "batch");
    const ackWaitMs = intFlag(values["ack-wait"], "ack-wait");
    const writers = intFlag(values.writers, "writers");
    const logger = pino({ level: values["log-level"] ?? process.env.LOG_LEVEL ?? "info" });
    // One connection per writer, one spare.
    const pool = openIndexPool(url, {
      applicationName: "hookbus-indexer",
      max: (writers ?? 2) + 1,
    });
    try {
      const { nc, http } = await openService(values, "hookbus-indexer", logger);
      let report: NodeJS.Timeout | undefined;
      return await runService({
        nc,
        logger,
        http,
        start: async () => {
          const indexer = await startIndexerWithRetry(
            nc,
            {
              pool,
              ...(values.consumer === undefined ? {} : { consumer: values.consumer }),
              ...(batchSize === undefined ? {} : { batchSize }),
              ...(ackWaitMs === undefined ? {} : { ackWaitMs }),
              ...(writers === undefined ? {} : { writers }),
            },
            { connectWait: values["connect-wait"], namespace: values.namespace, logger },
          );
          // A fatal indexer error ends the process like a lost connection: exit 1, restart.
          indexer.done.catch((error: unknown) => {
            logger.fatal({ err: error }, "the indexer failed: exiting");
            void nc.close();
          });
          report = setInterval(() => {
            indexer
              .lag()
              .then((lag) => logger.info({ ...indexer.stats, lag }, "indexer progress"))
              // The lag is unreadable now (the next report tries again): the counts still go out.
              .catch((error: unknown) =>
                logger.info({ ...indexer.stats, lagError: String(error) }, "indexer progress"),
              );
          }, 10_000).unref();
          return { ...indexerTelemetry(indexer, nc), indexer };
        },
        stop: async ({ indexer }) => {
          clearInterval(report);
          await indexer.stop();
          logger.info({ ...indexer.stats }, "indexer stopped");
        },
      });
    } finally {
      await pool.end().catch(() => {});
    }
  },
};
