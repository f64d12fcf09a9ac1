/**
 * `hookbus audit <subcommand>`: query the log, print a session's timeline, follow new records.
 * Subcommands are a table (`auditSubcommands`): adding one is adding a line.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { AUDIT_OUTCOMES, type AuditFilter, type AuditOutcome } from "../../audit/filter.js";
import { formatTimeline, queryRow, QUERY_COLUMNS, TableWriter } from "../../audit/format.js";
import type { TimelineEntry } from "../../audit/timeline.js";
import type { AuditSource } from "../../audit/audit-source.js";
import { LogAuditSource } from "../../audit/log-source.js";
import type { AuditQuery, AuditStats } from "../../audit/query.js";
import { maxScanFrom } from "../../audit/scan-limit.js";
import { withAuditSource, type LogConnection } from "../../audit/source.js";
import { parseAuditTime } from "../../audit/time.js";
import { Bus } from "../../bus/bus.js";
import { Subjects } from "../../bus/subjects.js";
import type { HookName } from "../../catalog/catalog.js";
import { HookbusError, isHookbusError } from "../../foundation/errors.js";
import type { IndexFilter } from "../../audit/pg/query.js";
import { indexUrlFrom } from "../../audit/pg/url.js";
import { parseCommand, type Command, type CommonFlags } from "../command.js";
import { connectNats } from "../../bus/connect.js";
import type { Output } from "../output.js";
import {
  addIndexFilters,
  auditStatsCommand,
  INDEX_FILTER_HELP,
  INDEX_POOL,
  indexFilterOptions,
  indexOptions,
  namespaceOf,
  printIndexPage,
} from "./audit-index.js";
import { auditVerifyCommand } from "./audit-verify.js";
import { auditAnchorCommand } from "./audit-anchor.js";

const CONNECTION_HELP = `connection: --server URL (env NATS_URL), --creds FILE (env NATS_CREDS),
            --namespace NS (env HOOKBUS_NAMESPACE, default hookbus)`;

const FILTER_HELP = `filters (server-side: the log's subject carries them):
  --agent ID          one agent
  --session KEY       one session
  --hook HOOK         one hook (before_tool_call, after_tool_call, ...)
  --outcome O         allow | modify | block | reply (decisions; block also holds the tool calls the
                      agent SDK's after_llm_call gate or an adapter refused), error | late | observed
  --since T           records stored at or after T (the server starts there)
filters (client-side: checked on each record the server sends):
  --run ID            one run (the context's runId; the index answers it server-side)
  --policy NAME       decisions that asked this policy, its late verdicts, and refusals it decided
  --until T           records stored at or before T (stops at the first later one)
  --shadow-changed    decisions whose shadow policies would have changed the outcome
  --limit N           stop after N records
${INDEX_FILTER_HELP}
times: ISO-8601 (2026-05-01, 2026-05-01T10:00:00Z) or a duration ago (30s, 15m, 2h, 7d, 1w)
output: a table, or --json: one entry per line {seq, subject, address, storedAt, record}`;

const filterOptions = {
  agent: { type: "string" },
  session: { type: "string" },
  run: { type: "string" },
  hook: { type: "string" },
  outcome: { type: "string" },
  policy: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  "shadow-changed": { type: "boolean" },
  limit: { type: "string" },
  json: { type: "boolean" },
  ...indexOptions,
  ...indexFilterOptions,
} as const;

interface FilterFlags {
  agent?: string | undefined;
  session?: string | undefined;
  run?: string | undefined;
  hook?: string | undefined;
  outcome?: string | undefined;
  policy?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  "shadow-changed"?: boolean | undefined;
  limit?: string | undefined;
}

/** Which flag each filter field comes from, for error messages. */
const FLAG_OF: Record<string, string> = {
  agentId: "--agent",
  sessionKey: "--session",
  runId: "--run",
  hook: "--hook",
  outcome: "--outcome",
  policy: "--policy",
  since: "--since",
  until: "--until",
  shadowChanged: "--shadow-changed",
  limit: "--limit",
  status: "--status",
  blockedBy: "--blocked-by",
  cursor: "--cursor",
};

/** The library filter the flags ask for (times and the limit parsed here, the rest checked by the library). */
export function filterFromFlags(flags: FilterFlags, now: Date = new Date()): AuditFilter {
  const filter: AuditFilter = {};
  if (flags.agent !== undefined) filter.agentId = flags.agent;
  if (flags.session !== undefined) filter.sessionKey = flags.session;
  if (flags.run !== undefined) filter.runId = flags.run;
  if (flags.hook !== undefined) filter.hook = flags.hook as HookName;
  if (flags.outcome !== undefined) filter.outcome = flags.outcome as AuditOutcome;
  if (flags.policy !== undefined) filter.policy = flags.policy;
  if (flags.since !== undefined) filter.since = parseAuditTime(flags.since, "--since", now);
  if (flags.until !== undefined) filter.until = parseAuditTime(flags.until, "--until", now);
  if (flags["shadow-changed"] === true) filter.shadowChanged = true;
  if (flags.limit !== undefined) {
    if (!/^\d+$/.test(flags.limit) || Number(flags.limit) < 1)
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `--limit must be a positive whole number, got ${JSON.stringify(flags.limit)}`,
        { argument: "--limit" },
      );
    filter.limit = Number(flags.limit);
  }
  return filter;
}

/** Library argument errors name the field (`agentId`); on the command line, name the flag. */
function asFlagError(error: unknown): unknown {
  if (!isHookbusError(error, "HOOKBUS_INVALID_ARGUMENT")) return error;
  const flag = FLAG_OF[String(error.details.argument)];
  if (flag === undefined) return error;
  return new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `${flag}: ${error.message}`,
    { ...error.details, argument: flag },
    error,
  );
}

/** The log over NATS, for a command that reads it (not opened when the index answers). */
async function connectLog(flags: CommonFlags): Promise<LogConnection> {
  // A bad namespace is reported before connecting.
  const subjects = new Subjects(flags.namespace);
  const nc: NatsConnection = await connectNats({ ...flags, name: "hookbus-audit" });
  const close = () => nc.drain().catch(() => {});
  try {
    return { bus: await Bus.open(nc, { namespace: subjects.namespace }), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Runs `fn` on the command's `AuditSource`, which openAuditSource picks: the index with `--index`
 * or HOOKBUS_INDEX_URL (no NATS connection is opened), else the log over one, guarded by
 * `--max-scan`. Library argument errors come out naming the flag.
 */
async function withSource<T>(
  flags: CommonFlags & { index?: string | undefined; "max-scan"?: string | undefined },
  fn: (source: AuditSource) => Promise<T>,
): Promise<T> {
  const run = async (source: AuditSource) => {
    try {
      return await fn(source);
    } catch (error) {
      throw asFlagError(error);
    }
  };
  const options = {
    indexUrl: indexUrlFrom(flags.index),
    namespace: namespaceOf(flags),
    pool: INDEX_POOL,
    maxScan: maxScanFrom(flags["max-scan"]),
    connectLog: () => connectLog(flags),
  };
  return withAuditSource(options, run);
}

/** A log scan's matches, as a table or JSON lines, with what the scan read. */
async function printScan(
  out: Output,
  source: LogAuditSource,
  filter: IndexFilter,
  json: boolean,
): Promise<number> {
  const query = await source.scan(filter);
  if (json) {
    for await (const entry of query) out.print(JSON.stringify(entry));
    reportBadRecords(out, query.stats);
    return 0;
  }
  const table = new TableWriter((line) => out.print(line), QUERY_COLUMNS, 200);
  for await (const entry of query) table.add(queryRow(entry));
  reportBadRecords(out, query.stats);
  if (table.count === 0) {
    out.print(
      `no matching records (${query.stats.delivered} read from the server, subject filter ${query.stats.filterSubject})`,
    );
    return 0;
  }
  table.end();
  out.print(footer(query.stats));
  return 0;
}

/** What a tail follows: the log's subject filter (a log tail counts what it reads), or the index. */
function following(tail: AsyncIterable<unknown>): string {
  return "stats" in tail ? (tail as AuditQuery).stats.filterSubject : "the index";
}

function usageError(out: Output, message: string, help: string): number {
  out.error(`${message}\n\n${help}`);
  return 2;
}

/** Undecodable records were skipped, not fatal: say which, on stderr. */
function reportBadRecords(out: { error(text: string): void }, stats: AuditStats): void {
  if (stats.badRecordCount === undefined || stats.badRecordCount === 0) return;
  out.error(
    `HOOKBUS_BAD_RECORD: skipped ${stats.badRecordCount} record(s) that cannot be read: seq ${(stats.badRecords ?? []).join(", ")}`,
  );
}

function footer(stats: AuditStats): string {
  const records = `${stats.matched} record${stats.matched === 1 ? "" : "s"}`;
  return `${records} (${stats.delivered} read from the server, subject filter ${stats.filterSubject})`;
}

const QUERY_HELP = `usage: hookbus audit query [filters] [--json]

Prints the log records that match, in log order, and ends.

${FILTER_HELP}

${CONNECTION_HELP}`;

export const auditQueryCommand: Command = {
  summary: "print the log records that match the filters",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, filterOptions);
    if (values.help === true) {
      out.print(QUERY_HELP);
      return 0;
    }
    if (positionals.length > 0)
      return usageError(out, `unexpected argument "${positionals[0]}"`, QUERY_HELP);
    const indexUrl = indexUrlFrom(values.index);
    let filter: IndexFilter;
    try {
      filter = addIndexFilters(filterFromFlags(values), values, indexUrl !== undefined);
    } catch (error) {
      throw asFlagError(error);
    }
    const json = values.json === true;
    return withSource(values, (source) =>
      source instanceof LogAuditSource
        ? printScan(out, source, filter, json)
        : printIndexPage(out, source, filter, json),
    );
  },
};

const SESSION_HELP = `usage: hookbus audit session SESSION [--agent ID] [--run ID] [--json]

Prints a session's timeline in log order: each interception (time, hook, outcome, total latency,
who decided), one indented line per policy asked (name, mode, status, effect, latency, verdict),
the shadow decision, late verdicts, errors, observations and refusals (tool calls the agent SDK's
after_llm_call gate or an adapter refused, outcome block). --run ID: one run of the session.
--json: one timeline entry per line.
--index URL (env HOOKBUS_INDEX_URL) reads it from the index; without it the log is scanned,
refused above --max-scan N records (env HOOKBUS_AUDIT_MAX_SCAN, default 100000; docs/audit.md).

${CONNECTION_HELP}`;

export const auditSessionCommand: Command = {
  summary: "print one session's timeline: who decided what, how long each policy took",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      agent: { type: "string" },
      run: { type: "string" },
      json: { type: "boolean" },
      ...indexOptions,
    });
    if (values.help === true) {
      out.print(SESSION_HELP);
      return 0;
    }
    const [sessionKey, ...extra] = positionals;
    if (sessionKey === undefined) return usageError(out, "a session key is required", SESSION_HELP);
    if (extra.length > 0) return usageError(out, `unexpected argument "${extra[0]}"`, SESSION_HELP);
    const print = (steps: TimelineEntry[]): number => {
      if (values.json === true) {
        for (const step of steps) out.print(JSON.stringify(step));
        return 0;
      }
      if (steps.length === 0) {
        out.print(
          `no records for session ${JSON.stringify(sessionKey)}${values.agent === undefined ? "" : ` of agent ${JSON.stringify(values.agent)}`}`,
        );
        return 0;
      }
      for (const line of formatTimeline(sessionKey, steps)) out.print(line);
      return 0;
    };
    const only = { agentId: values.agent, runId: values.run };
    return withSource(values, async (source) => print(await source.timeline(sessionKey, only)));
  },
};

const TAIL_HELP = `usage: hookbus audit tail [filters] [--json]

Prints new log records as they are stored, until SIGINT/SIGTERM (Ctrl-C), --limit records, or
the first record after --until. --since starts in the past (then follows).

${FILTER_HELP}

${CONNECTION_HELP}`;

export const auditTailCommand: Command = {
  summary: "follow new log records as they are stored (Ctrl-C stops)",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, filterOptions);
    if (values.help === true) {
      out.print(TAIL_HELP);
      return 0;
    }
    if (positionals.length > 0)
      return usageError(out, `unexpected argument "${positionals[0]}"`, TAIL_HELP);
    const indexUrl = indexUrlFrom(values.index);
    let filter: IndexFilter;
    try {
      filter = addIndexFilters(filterFromFlags(values), values, indexUrl !== undefined);
    } catch (error) {
      throw asFlagError(error);
    }
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    try {
      return await withSource(values, async (source) => {
        const tail = await source.tail(filter, { signal: stop.signal });
        out.error(`following ${following(tail)} (Ctrl-C to stop)`);
        const table =
          values.json === true
            ? undefined
            : new TableWriter((line) => out.print(line), QUERY_COLUMNS, 0);
        table?.end();
        for await (const entry of tail) {
          if (table === undefined) out.print(JSON.stringify(entry));
          else table.add(queryRow(entry));
        }
        return 0;
      });
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  },
};

/** `hookbus audit <name>`: one line per subcommand. */
export const auditSubcommands: Record<string, Command> = {
  query: auditQueryCommand,
  session: auditSessionCommand,
  tail: auditTailCommand,
  stats: auditStatsCommand,
  verify: auditVerifyCommand,
  anchor: auditAnchorCommand,
};

function auditHelp(): string {
  const rows = Object.entries(auditSubcommands).map(
    ([name, c]) => `  ${name.padEnd(10)} ${c.summary}`,
  );
  return [
    "usage: hookbus audit <subcommand> [options]   (hookbus audit <subcommand> --help)",
    "",
    "subcommands:",
    ...rows,
    "",
    `outcomes: ${AUDIT_OUTCOMES.join(", ")}; the guide: docs/audit.md`,
  ].join("\n");
}

export const auditCommand: Command = {
  summary: "query the audit log, print a session's timeline, follow new records",
  async run(argv, out) {
    const [name, ...rest] = argv;
    if (name === undefined) {
      out.error(auditHelp());
      return 2;
    }
    if (name === "--help" || name === "-h" || name === "help") {
      out.print(auditHelp());
      return 0;
    }
    const sub = Object.hasOwn(auditSubcommands, name) ? auditSubcommands[name] : undefined;
    if (sub === undefined)
      return usageError(out, `unknown audit subcommand "${name}"`, auditHelp());
    return sub.run(rest, out);
  },
};
