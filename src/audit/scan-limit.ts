/**
 * The JetStream-only audit path's guard. Without the index, a filtered read makes nats-server 2.9
 * walk the log's blocks while holding the stream's lock, and log appends (so every decision) wait
 * behind it: measured, a cold session query on 300k records stalled appends for up to a second.
 * So the JetStream path refuses to scan a log larger than a limit, and says how to use the index.
 */
import type { Bus } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import { assertLogExists } from "../log/reader.js";

/** Default largest log the JetStream path scans; `HOOKBUS_AUDIT_MAX_SCAN` / `--max-scan` change it. */
export const DEFAULT_MAX_SCAN = 100_000;
export const MAX_SCAN_ENV = "HOOKBUS_AUDIT_MAX_SCAN";

/** The limit from a flag, else the environment, else the default; 0 turns the guard off. */
export function maxScanFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const text = flag ?? env[MAX_SCAN_ENV];
  if (text === undefined || text === "") return DEFAULT_MAX_SCAN;
  if (!/^\d+$/.test(text))
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--max-scan (${MAX_SCAN_ENV}) must be a whole number of records (0: no limit), got ${JSON.stringify(text)}`,
      { argument: "--max-scan" },
    );
  return Number(text);
}

/**
 * Throws HOOKBUS_SCAN_TOO_LARGE when the log holds more than `maxScan` records (one stream info,
 * which does not scan). The check is on the whole log: a filtered consumer's first read walks it.
 */
export async function assertScanAllowed(bus: Bus, maxScan: number): Promise<void> {
  if (maxScan === 0) return;
  const info = await assertLogExists(bus);
  const records = info.state.messages;
  if (records <= maxScan) return;
  throw new HookbusError(
    "HOOKBUS_SCAN_TOO_LARGE",
    `the log holds ${records} records, more than this query may scan without the index (${maxScan}): ` +
      `use the index (--index postgres://… or HOOKBUS_INDEX_URL, kept by \`hookbus indexer\`), ` +
      `or raise --max-scan (${MAX_SCAN_ENV}; 0 = no limit) knowing that the scan delays decisions meanwhile`,
    { records, maxScan },
  );
}
