/**
 * A durable consumer is checked before it is used: whoever created it first decides its filter,
 * deliver and ack policy, so an owner that merely finds "a consumer with my name" could consume
 * someone else's idea of it (an indexer filtered to one agent indexes nothing of the others, and
 * the lag it reports is 0). Pure comparison plus one read; the owner decides what a mismatch stops.
 */
import type { ConsumerConfig, JetStreamManager } from "@nats-io/jetstream";
import { HookbusError } from "../foundation/errors.js";

/** What makes a durable its owner's: everything else (ack wait, limits) may be tuned later. */
export interface DurableShape {
  /** Undefined or "": the whole stream. */
  filter_subject?: string;
  ack_policy: ConsumerConfig["ack_policy"];
  deliver_policy: ConsumerConfig["deliver_policy"];
}

const filterOf = (value: string | undefined) => (value === undefined || value === ">" ? "" : value);

/** Each field of `actual` that differs from `expected`, as `field: actual (expected ...)`. */
export function durableMismatches(
  expected: DurableShape,
  actual: Partial<ConsumerConfig>,
): string[] {
  const found: string[] = [];
  const compare = (field: string, want: unknown, got: unknown) => {
    if (want !== got)
      found.push(`${field}: ${JSON.stringify(got)} (expected ${JSON.stringify(want)})`);
  };
  compare("filter_subject", filterOf(expected.filter_subject), filterOf(actual.filter_subject));
  const filters = actual.filter_subjects ?? [];
  if (filters.length > 0) found.push(`filter_subjects: ${JSON.stringify(filters)} (expected none)`);
  compare("ack_policy", expected.ack_policy, actual.ack_policy);
  compare("deliver_policy", expected.deliver_policy, actual.deliver_policy);
  // A pull consumer: a push one would deliver somewhere the owner does not read.
  compare("deliver_subject", "", actual.deliver_subject ?? "");
  return found;
}

export function consumerMismatchError(stream: string, name: string, found: string[]): HookbusError {
  return new HookbusError(
    "HOOKBUS_CONSUMER_MISMATCH",
    `consumer ${name} on ${stream} is not configured as its owner creates it (${found.join("; ")}): ` +
      `someone else created or altered it; delete it (nats consumer rm ${stream} ${name}) and restart`,
    { stream, consumer: name, fields: found },
  );
}

/** Reads the durable's configuration and throws HOOKBUS_CONSUMER_MISMATCH unless it is `expected`. */
export async function assertDurableShape(
  jsm: JetStreamManager,
  stream: string,
  name: string,
  expected: DurableShape,
): Promise<void> {
  const info = await jsm.consumers.info(stream, name);
  const found = durableMismatches(expected, info.config);
  if (found.length > 0) throw consumerMismatchError(stream, name, found);
}
