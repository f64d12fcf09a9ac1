/**
 * The JetStream resources hookbus owns, created on start with documented settings
 * (docs/operations.md). Creating is idempotent, so any number of coordinators may start at once;
 * an existing stream is used as it is, never silently reconfigured.
 */
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { HookbusError } from "../foundation/errors.js";
import type { Subjects } from "./subjects.js";

/** Most replicas a JetStream cluster allows for a stream or bucket. */
export const MAX_REPLICAS = 5;

/**
 * The replica count of every stream and bucket hookbus creates when the caller names none:
 * `HOOKBUS_REPLICAS` (1-5), default 1. A JetStream cluster runs 3 (docs/operations.md).
 */
export function defaultReplicas(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HOOKBUS_REPLICAS;
  return raw === undefined || raw === "" ? 1 : checkReplicas(Number(raw), "HOOKBUS_REPLICAS");
}

export function checkReplicas(replicas: number, source = "replicas"): number {
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `${source} must be an integer from 1 to ${MAX_REPLICAS}, got ${String(replicas)}`,
      { argument: source },
    );
  }
  return replicas;
}

export interface LogSettings {
  /** Keep records this long; 0 keeps them forever (the default: it is an audit log). */
  maxAgeMs?: number;
  /** Cap the log's size; -1 (default) is no cap. */
  maxBytes?: number;
  /**
   * When a cap is reached: `new` (default) refuses new records, so decisions fail with
   * HOOKBUS_LOG_UNAVAILABLE instead of audit history being deleted; `old` drops the oldest.
   */
  discard?: "new" | "old";
  /** Window in which a retried publish with the same message id is stored once. */
  duplicateWindowMs?: number;
  /** Copies of each stream in a JetStream cluster. Default: defaultReplicas() (HOOKBUS_REPLICAS or 1). */
  replicas?: number;
}

type StreamSpec = Partial<StreamConfig> & { name: string };

export const DEFAULT_LOG_SETTINGS: Required<LogSettings> = {
  maxAgeMs: 0,
  maxBytes: -1,
  discard: "new",
  duplicateWindowMs: 2 * 60_000,
  replicas: 1,
};

function baseConfig(settings: Required<LogSettings>): Partial<StreamConfig> {
  return {
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(settings.maxAgeMs),
    max_bytes: settings.maxBytes,
    discard: settings.discard === "new" ? DiscardPolicy.New : DiscardPolicy.Old,
    duplicate_window: nanos(settings.duplicateWindowMs),
    num_replicas: settings.replicas,
    // An audit log nobody can edit through the API: no message deletes, no purges.
    deny_delete: true,
    deny_purge: true,
    allow_direct: true,
  };
}

/** The defaults, then the replica count of the environment, then what the caller set. */
function resolve(settings: LogSettings): Required<LogSettings> {
  const s = { ...DEFAULT_LOG_SETTINGS, ...settings };
  s.replicas =
    settings.replicas === undefined ? defaultReplicas() : checkReplicas(settings.replicas);
  return s;
}

export function logStreamConfig(subjects: Subjects, settings: LogSettings = {}): StreamSpec {
  const s = resolve(settings);
  return {
    name: subjects.logStream,
    description: "hookbus decision log: one record per interception",
    subjects: [subjects.auditAll],
    ...baseConfig(s),
  };
}

/** Blobs are referenced by log records, so they live (at least) as long as the log. */
export function blobStreamConfig(subjects: Subjects, settings: LogSettings = {}): StreamSpec {
  const s = resolve(settings);
  return {
    name: subjects.blobStream,
    description: "hookbus large bodies, in content-addressed chunks",
    subjects: [subjects.blobAll],
    ...baseConfig(s),
  };
}

async function ensureStream(
  jsm: JetStreamManager,
  config: StreamSpec,
  logger?: Logger,
): Promise<void> {
  const name = config.name;
  try {
    await jsm.streams.info(name);
    return;
  } catch (error) {
    if (!isStreamNotFound(error)) throw error;
  }
  try {
    await jsm.streams.add(config);
    logger?.info({ stream: name }, "created stream");
  } catch (error) {
    // Another process created it between our info and add: fine, as long as it exists now.
    await jsm.streams.info(name).catch(() => {
      throw error;
    });
  }
}

/** JetStream said the stream does not exist (any other failure is not "absent"). */
export function isStreamNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;
}

/**
 * JetStream refused a publish whose expected last sequence (of the stream or of the subject: a KV
 * compare-and-set) was not the current one: someone else wrote first. Any other failure is not a
 * lost race.
 */
export function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** JetStream said the consumer does not exist (any other failure is not "absent"). */
export function isConsumerNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound;
}

/**
 * These credentials may not read it (a NATS permissions violation, possibly wrapped as a request
 * error's cause): for a role that is not meant to see it, the same as absent.
 */
export function isPermissionViolation(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; depth++) {
    if (e.name === "PermissionViolationError" || /Permissions Violation/.test(e.message))
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Delete an ordered consumer once read. Best effort: one left behind (NATS down, the connection
 * closing) is removed by the server once idle, so a failure is only logged at debug.
 */
export async function deleteOrderedConsumer(
  consumer: { delete(): Promise<boolean> },
  logger: Logger,
): Promise<void> {
  await consumer.delete().catch((error: unknown) => {
    logger.debug(
      { err: error },
      "could not delete an ordered consumer (the server removes it once idle)",
    );
  });
}

export async function ensureLogStreams(
  jsm: JetStreamManager,
  subjects: Subjects,
  settings: LogSettings = {},
  logger?: Logger,
): Promise<void> {
  await ensureStream(jsm, logStreamConfig(subjects, settings), logger);
  await ensureStream(jsm, blobStreamConfig(subjects, settings), logger);
}
