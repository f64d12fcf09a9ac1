/**
 * What every hookbus process shares over one NATS connection: the subjects of its namespace,
 * JetStream handles, the body codec (gzip and blobs for large bodies) and a logger.
 */
import {
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { pino, type Logger } from "pino";
import { BlobStore, DEFAULT_CHUNK_BYTES } from "./blobs.js";
import { BodyCodec, type BodyCodecOptions } from "./codec.js";
import { DEFAULT_NAMESPACE, Subjects } from "./subjects.js";
import { resolveLimits } from "../foundation/limits.js";

export interface BusOptions {
  /** Subject prefix; deployments with different namespaces never see each other's calls. */
  namespace?: string;
  /** Library code logs nothing unless given a logger. */
  logger?: Logger;
  /** @internal How bodies travel (compression, blobs); the defaults are the protocol's. */
  codec?: BodyCodecOptions;
}

/**
 * Request timeout of KV operations (state, chain heads, registry). The client's defaults (2 s for
 * KV, 5 s for direct gets) fail operations on a briefly starved server; callers with a deadline
 * pass a shorter one.
 */
export const KV_REQUEST_TIMEOUT_MS = 10_000;

/**
 * KV buckets read with compare-and-set (session state, chain heads) turn off direct gets: under a
 * burst of concurrent reads, nats-server 2.9 occasionally never answers a direct get, and the
 * read-modify-write loop then stalls until its timeout. Reads through the stream API are
 * answered by the stream itself.
 */
export const KV_ALLOW_DIRECT = false;

/** Room left under max_payload for headers and protocol framing. */
const HEADROOM = 64 * 1024;

export class Bus {
  /** @internal The namespace's subjects (docs/protocol.md). */
  readonly subjects: Subjects;
  /** @internal */
  readonly codec: BodyCodec;
  readonly logger: Logger;

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    options: BusOptions,
  ) {
    this.subjects = new Subjects(options.namespace ?? DEFAULT_NAMESPACE);
    this.logger = options.logger ?? pino({ level: "silent" });
    const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
    const chunkBytes = Math.min(DEFAULT_CHUNK_BYTES, Math.floor(maxPayload / 2));
    this.codec = new BodyCodec(new BlobStore(js, jsm, this.subjects, chunkBytes), {
      maxInlineBytes: Math.max(1024, maxPayload - HEADROOM),
      ...options.codec,
      // Every process (coordinator, worker, agent, auditor) decodes within the limits;
      // HOOKBUS_MAX_* in the environment raise or lower them (docs/limits.md).
      limits: { ...resolveLimits(), ...options.codec?.limits },
    });
  }

  static async open(nc: NatsConnection, options: BusOptions = {}): Promise<Bus> {
    return new Bus(nc, jetstream(nc), await jetstreamManager(nc), options);
  }
}
