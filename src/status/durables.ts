/**
 * `hookbus status` checks the durables on the log against what their owners create: the indexer's
 * and, for every policy of the registry, one per observed hook. A durable someone else created or
 * altered is a problem (HOOKBUS_CONSUMER_MISMATCH), whether or not its owner runs right now.
 */
import type { Bus } from "../bus/bus.js";
import { durableMismatches, type DurableShape } from "../bus/durable-check.js";
import { isConsumerNotFound, isPermissionViolation, isStreamNotFound } from "../bus/streams.js";
import { OBSERVATIONAL_HOOK_NAMES } from "../catalog/catalog.js";
import { INDEXER_DURABLE_SHAPE } from "../indexer/consumer.js";
import { observerDurableName, observerDurableShape } from "../worker/observer.js";

/** Bounds the consumer reads one status makes (policies × observed hooks + the indexer). */
const MAX_CHECKED = 600;

async function mismatchOf(
  bus: Bus,
  name: string,
  shape: DurableShape,
): Promise<string | undefined> {
  let config;
  try {
    config = (await bus.jsm.consumers.info(bus.subjects.logStream, name)).config;
  } catch (error) {
    // Absent, or not readable with these credentials: nothing this role can check.
    if (isConsumerNotFound(error) || isStreamNotFound(error) || isPermissionViolation(error)) {
      return undefined;
    }
    // Not readable for another reason (a timeout, NATS down): said, not passed over as "fine".
    return `consumer ${name} could not be checked: ${String((error as Error)?.message ?? error)}; run hookbus status again once NATS answers`;
  }
  const found = durableMismatches(shape, config);
  if (found.length === 0) return undefined;
  return `consumer ${name} is not configured as its owner creates it (${found.join("; ")}): someone else created or altered it (HOOKBUS_CONSUMER_MISMATCH); find who (docs/errors.md), delete it (nats consumer rm ${bus.subjects.logStream} ${name}) and restart its owner`;
}

export async function durableProblems(
  bus: Bus,
  indexerConsumer: string,
  policies: readonly string[],
): Promise<string[]> {
  const checks: [string, DurableShape][] = [[indexerConsumer, INDEXER_DURABLE_SHAPE]];
  for (const policy of policies)
    for (const hook of OBSERVATIONAL_HOOK_NAMES)
      checks.push([
        observerDurableName(bus.subjects.namespace, policy, hook),
        observerDurableShape(bus.subjects, hook),
      ]);
  const found = await Promise.all(
    checks.slice(0, MAX_CHECKED).map(([name, shape]) => mismatchOf(bus, name, shape)),
  );
  return found.filter((problem): problem is string => problem !== undefined);
}
