/**
 * The append-only streams beside the log (`<NS>_SEALS`, `<NS>_SIGNATURES`): one subject, file
 * storage, no deletes or purges through the API, full ones refuse new messages. Whoever starts
 * first creates one; everyone else uses it as it is.
 */
import { DiscardPolicy, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import type { Bus } from "../bus/bus.js";
import { isStreamNotFound } from "../bus/streams.js";

export interface AppendOnlyStream {
  name: string;
  subject: string;
  description: string;
  replicas: number;
}

/** Create the stream unless it exists (another process creating it first is fine). */
export async function ensureAppendOnlyStream(bus: Bus, stream: AppendOnlyStream): Promise<void> {
  try {
    await bus.jsm.streams.info(stream.name);
    return;
  } catch (error) {
    if (!isStreamNotFound(error)) throw error; // created below
  }
  await bus.jsm.streams
    .add({
      name: stream.name,
      description: stream.description,
      subjects: [stream.subject],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.New,
      num_replicas: stream.replicas,
      deny_delete: true,
      deny_purge: true,
      allow_direct: true,
    })
    .catch(async (error: unknown) => {
      // Someone else created it first: fine as long as it exists now.
      await bus.jsm.streams.info(stream.name).catch(() => {
        throw error;
      });
    });
}
