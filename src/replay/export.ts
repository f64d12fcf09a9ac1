/**
 * Log exports: NDJSON, one log entry per line, as `hookbus audit query --json` prints them
 * (`{seq, subject, address, storedAt, record}`; only `record` is required) or bare records.
 * Exports are how recorded sessions travel: checked into a repository as test fixtures, attached
 * to a review, replayed without a NATS server.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { HookbusError } from "../foundation/errors.js";
import type { LogEntry } from "../log/reader.js";
import { LogRecord } from "../log/record.js";
import type { ReplayEntry } from "./types.js";

export interface ReadExportOptions {
  /** Told how far reading has got, in bytes (for a progress bar). */
  onProgress?: (bytesRead: number, totalBytes: number) => void;
}

/** One export line: the entry as JSON (`storedAt` as an ISO time). */
export function formatExportLine(entry: LogEntry | ReplayEntry): string {
  return JSON.stringify(entry);
}

function badLine(path: string, line: number, why: string): HookbusError {
  return new HookbusError("HOOKBUS_BAD_MESSAGE", `${path}:${line}: not a log entry: ${why}`, {
    path,
    line,
  });
}

/** Parse one export line (already JSON-decoded). */
export function parseExportEntry(value: unknown, path = "export", line = 1): ReplayEntry {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badLine(path, line, "expected a JSON object");
  }
  const object = value as Record<string, unknown>;
  const wrapped = "record" in object;
  const parsed = LogRecord.safeParse(wrapped ? object.record : object);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join(".") || "(record)"}: ${i.message}`)
      .join("; ");
    throw badLine(path, line, `the record does not match the log record schema (${issues})`);
  }
  if (!wrapped) return { record: parsed.data };
  const entry: ReplayEntry = { record: parsed.data };
  if (typeof object.seq === "number") entry.seq = object.seq;
  if (typeof object.subject === "string") entry.subject = object.subject;
  const address = object.address as { agentId?: unknown; sessionKey?: unknown } | undefined;
  if (typeof address?.agentId === "string" && typeof address.sessionKey === "string")
    entry.address = { agentId: address.agentId, sessionKey: address.sessionKey };
  if (typeof object.storedAt === "string") {
    const at = new Date(object.storedAt);
    if (Number.isNaN(at.getTime())) throw badLine(path, line, `storedAt is not a time`);
    entry.storedAt = at;
  }
  return entry;
}

/** The entries of an export file, in file order; a bad line fails with HOOKBUS_BAD_MESSAGE naming it. */
export async function* readExport(
  path: string,
  options: ReadExportOptions = {},
): AsyncGenerator<ReplayEntry> {
  let totalBytes: number;
  try {
    totalBytes = (await stat(path)).size;
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `cannot read the export file ${path}: ${(error as Error).message}`,
      { argument: "from-file", path },
      error,
    );
  }
  const lines = createInterface({
    input: createReadStream(path, { encoding: "utf8" }),
    crlfDelay: Infinity,
  });
  let number = 0;
  let bytes = 0;
  try {
    for await (const text of lines) {
      number++;
      bytes += Buffer.byteLength(text) + 1;
      if (text.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw badLine(path, number, `invalid JSON (${(error as Error).message})`);
      }
      yield parseExportEntry(value, path, number);
      options.onProgress?.(Math.min(bytes, totalBytes), totalBytes);
    }
  } finally {
    lines.close();
  }
}
