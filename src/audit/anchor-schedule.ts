/**
 * Anchors on a schedule (`hookbus audit anchor --every 1h --out DIR`): one signed anchor file per
 * new seal batch, so a log and seal stream deleted and re-created later are caught against the
 * latest anchor (`hookbus audit verify --anchor DIR`). A tick that finds no new batch writes
 * nothing; a tick that fails (NATS away, no sealer yet) is logged and retried at the next one.
 * Files are written whole (a temporary file renamed), never overwritten, and kept: they are the
 * evidence, a few hundred bytes each.
 */
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import type { SealKeyPair } from "../log/seal/keys.js";
import { AnchorStatement, makeAnchor } from "./anchor.js";

/** Anchors less often than this are pointless; more often than daily loses the point of a bound. */
export const MIN_ANCHOR_EVERY_MS = 1000;
export const MAX_ANCHOR_EVERY_MS = 7 * 24 * 3600 * 1000;

/** `anchor-<batch, 12 digits>.json`: names sort in batch order. */
const FILE = /^anchor-(\d{12})\.json$/;

export function anchorFileName(batch: number): string {
  return `anchor-${String(batch).padStart(12, "0")}.json`;
}

/** The batch of the newest anchor file in `dir` (0 when there is none). */
export function newestAnchoredBatch(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const batch = Number(FILE.exec(name)?.[1] ?? 0);
    if (batch > newest) newest = batch;
  }
  return newest;
}

/**
 * `--anchor PATH` of verify: a file as it is; a directory of scheduled anchors: its newest.
 * HOOKBUS_ANCHOR_INVALID for a directory with none.
 */
export function resolveAnchorPath(path: string): string {
  let directory = false;
  try {
    directory = statSync(path).isDirectory();
  } catch {
    return path; // readAnchor reports the missing file
  }
  if (!directory) return path;
  const newest = newestAnchoredBatch(path);
  if (newest === 0)
    throw new HookbusError(
      "HOOKBUS_ANCHOR_INVALID",
      `${path} holds no anchor file (anchor-<batch>.json, written by hookbus audit anchor --every)`,
    );
  return join(path, anchorFileName(newest));
}

export interface AnchorScheduleOptions {
  bus: Bus;
  key: SealKeyPair;
  /** Created if missing. */
  dir: string;
  everyMs: number;
  logger: Logger;
}

export interface AnchorSchedule {
  /** Anchor files written since the start. */
  readonly written: number;
  /** Ticks run since the start, written or not. */
  readonly ticks: number;
  /** No further tick; resolves once a tick in progress has finished. */
  stop(): Promise<void>;
}

export function checkAnchorEvery(ms: number | undefined, text: string): number {
  if (ms === undefined || ms < MIN_ANCHOR_EVERY_MS || ms > MAX_ANCHOR_EVERY_MS)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--every ${JSON.stringify(text)}: a duration from 1s to 7d, such as 15m or 1h`,
      { argument: "--every" },
    );
  return ms;
}

/** Writes the first anchor at once, then one per `everyMs` while a new batch was sealed. */
export function startAnchorSchedule(options: AnchorScheduleOptions): AnchorSchedule {
  const { dir, everyMs, logger } = options;
  mkdirSync(dir, { recursive: true });
  let last = newestAnchoredBatch(dir);
  let written = 0;
  let ticks = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const tick = async (): Promise<void> => {
    ticks++;
    try {
      const anchor = await makeAnchor(options.bus, options.key);
      const { batch, toSeq } = AnchorStatement.parse(JSON.parse(anchor.statement));
      if (batch <= last) {
        logger.debug({ batch }, "no new seal batch since the last anchor: nothing written");
        return;
      }
      const file = join(dir, anchorFileName(batch));
      const temporary = `${file}.tmp-${process.pid}`;
      writeFileSync(temporary, `${JSON.stringify(anchor)}\n`, { flag: "wx" });
      renameSync(temporary, file);
      last = batch;
      written++;
      logger.info({ file, batch, toSeq }, "anchor written");
    } catch (error) {
      // Retried at the next tick: a sealer that has not sealed yet, or NATS away for a while.
      logger.warn({ err: error }, "no anchor this time; trying again at the next tick");
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick().finally(schedule);
    }, everyMs);
  };
  running = tick().finally(schedule);

  return {
    get written() {
      return written;
    },
    get ticks() {
      return ticks;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
