/**
 * What to replay from the live log: chosen sessions, or one agent over a time range. Reading
 * goes through `readLog`, which streams with one consumer per selection (filtered by subject on
 * the server), so a replay pays no round trip per record.
 */
import type { Bus } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import { entriesOf, readLogBatches, type EntryBatch, type LogEntry } from "./reader.js";

export interface LogSelection {
  /** Replay these sessions, one after the other, each in log order. */
  sessions?: string[];
  /** Every session of this agent (with `sessions`: only that agent's records of them). */
  agentId?: string;
  /** From the first record stored at or after this time. */
  since?: Date;
  /** Up to the last record stored at or before this time. */
  until?: Date;
}

export function assertSelection(selection: LogSelection): void {
  const sessions = selection.sessions ?? [];
  if (sessions.length === 0 && selection.agentId === undefined) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      "choose what to replay: one or more sessions, or an agent (with an optional time range)",
      { argument: "selection" },
    );
  }
  for (const value of [...sessions, selection.agentId]) {
    if (value === "") {
      throw new HookbusError("HOOKBUS_INVALID_ARGUMENT", "session and agent ids are non-empty", {
        argument: "selection",
      });
    }
  }
  const { since, until } = selection;
  for (const [name, at] of [
    ["since", since],
    ["until", until],
  ] as const) {
    if (at !== undefined && Number.isNaN(at.getTime())) {
      throw new HookbusError("HOOKBUS_INVALID_ARGUMENT", `${name} is not a valid time`, {
        argument: name,
      });
    }
  }
  if (since !== undefined && until !== undefined && since > until) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `the time range is empty: since ${since.toISOString()} is after until ${until.toISOString()}`,
      { argument: "since" },
    );
  }
}

/** The selected records, in log order per session. Bounded: ends once it has caught up. */
export function readSelection(bus: Bus, selection: LogSelection): AsyncGenerator<LogEntry> {
  // One async step per record between the fetches and the reader, however many sessions.
  return entriesOf(selectionBatches(bus, selection));
}

async function* selectionBatches(bus: Bus, selection: LogSelection): AsyncGenerator<EntryBatch> {
  assertSelection(selection);
  const range = {
    ...(selection.since === undefined ? {} : { since: selection.since }),
    ...(selection.until === undefined ? {} : { until: selection.until }),
  };
  const agent = selection.agentId === undefined ? {} : { agentId: selection.agentId };
  const sessions = [...new Set(selection.sessions ?? [])];
  if (sessions.length === 0) {
    yield* readLogBatches(bus, { filter: agent, ...range });
    return;
  }
  for (const sessionKey of sessions) {
    yield* readLogBatches(bus, { filter: { ...agent, sessionKey }, ...range });
  }
}

/**
 * How many records the selection holds, from the stream's per-subject counts (one request per
 * session, no records read); undefined with a time range, which subject counts cannot tell.
 */
export async function countSelection(
  bus: Bus,
  selection: LogSelection,
): Promise<number | undefined> {
  if (selection.since !== undefined || selection.until !== undefined) return undefined;
  const agent = selection.agentId === undefined ? {} : { agentId: selection.agentId };
  const sessions = [...new Set(selection.sessions ?? [])];
  const filters =
    sessions.length === 0 ? [agent] : sessions.map((sessionKey) => ({ ...agent, sessionKey }));
  let total = 0;
  for (const filter of filters) {
    const info = await bus.jsm.streams.info(bus.subjects.logStream, {
      subjects_filter: bus.subjects.auditFilter(filter),
    });
    for (const count of Object.values(info.state.subjects ?? {})) total += count;
  }
  return total;
}
