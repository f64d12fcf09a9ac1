/**
 * The one place that picks how the audit log is read: the index when a `postgres://` URL is given
 * (`--index`, HOOKBUS_INDEX_URL), else a scan of the log over the caller's bus. The CLI's audit
 * commands, the UI and replay's selection all open their reader here.
 */
import type { Bus } from "../bus/bus.js";
import { Subjects } from "../bus/subjects.js";
import { HookbusError } from "../foundation/errors.js";
import type { AuditSource } from "./audit-source.js";
import { LogAuditSource } from "./log-source.js";
import { IndexAuditSource } from "./pg/index-source.js";
import { openIndexPool, type IndexPoolOptions } from "./pg/pool.js";
import { assertIndexSchema } from "./pg/schema.js";

/** A connection to the log opened for one source, and how to let it go. */
export interface LogConnection {
  bus: Bus;
  close(): Promise<void>;
}

export interface AuditSourceOptions {
  /** The index's URL; undefined: scan the log. */
  indexUrl?: string | undefined;
  /** The bus a log scan reads (needed without an index). */
  bus?: Bus | undefined;
  /**
   * Opens a connection to the log when the log is read and no `bus` is given (a command that
   * needs NATS only without the index); the source closes it.
   */
  connectLog?: (() => Promise<LogConnection>) | undefined;
  /** The namespace the index is asked about (default: the bus's, else `HOOKBUS_NAMESPACE`'s). */
  namespace?: string | undefined;
  /** The index's pool (connections, application name). */
  pool?: IndexPoolOptions | undefined;
  /** The largest log a scan may walk (default 100,000; 0: no limit); see scan-limit.ts. */
  maxScan?: number | undefined;
  /** Check the index's schema version first (HOOKBUS_INDEX_SCHEMA when it differs); default false. */
  checkSchema?: boolean | undefined;
}

/** An `AuditSource` on the index when `indexUrl` is set, else on the log through `bus`. */
export async function openAuditSource(options: AuditSourceOptions): Promise<AuditSource> {
  if (options.indexUrl !== undefined) {
    const namespace = options.bus?.subjects.namespace ?? new Subjects(options.namespace).namespace;
    const pool = openIndexPool(options.indexUrl, options.pool);
    const source = new IndexAuditSource(pool, namespace, options.bus);
    try {
      if (options.checkSchema === true) await assertIndexSchema(pool);
    } catch (error) {
      await source.close();
      throw error;
    }
    return source;
  }
  if (options.bus !== undefined) return new LogAuditSource(options.bus, options.maxScan);
  if (options.connectLog !== undefined) {
    const connection = await options.connectLog();
    return new LogAuditSource(connection.bus, options.maxScan, () => connection.close());
  }
  throw new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    "reading the audit log needs the index (postgres://…) or a connection to the log",
    { argument: "index" },
  );
}

/** Runs `fn` on a source opened for it and closes the source after, whatever `fn` did. */
export async function withAuditSource<T>(
  options: AuditSourceOptions,
  fn: (source: AuditSource) => Promise<T>,
): Promise<T> {
  const source = await openAuditSource(options);
  try {
    return await fn(source);
  } finally {
    await source.close();
  }
}
