/**
 * `hookbus audit` on the index (PostgreSQL): what query, session and tail do when `--index URL`
 * or HOOKBUS_INDEX_URL is set, and `audit stats`, which only the index answers.
 */
import { printable, queryRow, QUERY_COLUMNS, TableWriter } from "../../audit/format.js";
import { parseAuditTime } from "../../audit/time.js";
import { Subjects } from "../../bus/subjects.js";
import { HookbusError } from "../../foundation/errors.js";
import type { AuditSource } from "../../audit/audit-source.js";
import { withAuditSource } from "../../audit/source.js";
import {
  POLICY_STATUSES,
  type IndexFilter,
  type IndexStats,
  type PolicyStatusFilter,
} from "../../audit/pg/query.js";
import { requireIndexUrl } from "../../audit/pg/url.js";
import { parseCommand, type Command, type CommonFlags } from "../command.js";
import type { Output } from "../output.js";

/** Options every audit subcommand takes for the index and the JetStream path's guard. */
export const indexOptions = {
  index: { type: "string" },
  "max-scan": { type: "string" },
} as const;

/** Filters only the index answers. */
export const indexFilterOptions = {
  status: { type: "string" },
  "blocked-by": { type: "string" },
  cursor: { type: "string" },
} as const;

export const INDEX_FILTER_HELP = `filters the index answers (need --index):
  --status S          decisions where a policy (with --policy: that one) ended ${POLICY_STATUSES.join(" | ")}
  --blocked-by NAME   decisions blocked by this policy
  --cursor SEQ        records after this sequence (the "next page" line prints it)
index: --index URL (env HOOKBUS_INDEX_URL): answer from PostgreSQL (kept by \`hookbus indexer\`);
  without it, the log is scanned, refused above --max-scan N records (env HOOKBUS_AUDIT_MAX_SCAN,
  default 100000, 0 = no limit): see docs/audit.md`;

export interface IndexFilterFlags {
  status?: string | undefined;
  "blocked-by"?: string | undefined;
  cursor?: string | undefined;
}

/** The pool a one-shot audit command opens on the index. */
export const INDEX_POOL = { max: 2, applicationName: "hookbus-audit" };

/** Adds the index-only flags to a filter; throws when one is used without the index. */
export function addIndexFilters(
  filter: IndexFilter,
  flags: IndexFilterFlags,
  indexed: boolean,
): IndexFilter {
  const used = (["status", "blocked-by", "cursor"] as const).filter((f) => flags[f] !== undefined);
  if (used.length > 0 && !indexed)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--${used[0]} needs the index: pass --index postgres://… or set HOOKBUS_INDEX_URL`,
      { argument: `--${used[0]}` },
    );
  const out: IndexFilter = { ...filter };
  if (flags.status !== undefined) out.status = flags.status as PolicyStatusFilter;
  if (flags["blocked-by"] !== undefined) out.blockedBy = flags["blocked-by"];
  if (flags.cursor !== undefined) {
    if (!/^\d+$/.test(flags.cursor))
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `--cursor must be a stream sequence, got ${JSON.stringify(flags.cursor)}`,
        { argument: "--cursor" },
      );
    out.cursor = Number(flags.cursor);
  }
  return out;
}

/** The namespace of the flags, checked (a bad one is reported before connecting). */
export function namespaceOf(flags: CommonFlags): string {
  return new Subjects(flags.namespace).namespace;
}

/** A page from the index, as a table or JSON lines, with the cursor of the next page. */
export async function printIndexPage(
  out: Output,
  source: AuditSource,
  filter: IndexFilter,
  json: boolean,
): Promise<number> {
  const page = await source.page(filter);
  if (json) {
    for (const entry of page.entries) out.print(JSON.stringify(entry));
    if (page.nextCursor !== undefined) out.error(`next page: --cursor ${page.nextCursor}`);
    return 0;
  }
  if (page.entries.length === 0) {
    out.print("no matching records (index)");
    return 0;
  }
  const table = new TableWriter((line) => out.print(line), QUERY_COLUMNS, 200);
  for (const entry of page.entries) table.add(queryRow(entry));
  table.end();
  const n = page.entries.length;
  out.print(
    `${n} record${n === 1 ? "" : "s"} (index)` +
      (page.nextCursor === undefined ? "" : `; next page: --cursor ${page.nextCursor}`),
  );
  return 0;
}

export function formatStats(stats: IndexStats): string[] {
  const range = `${stats.since?.toISOString() ?? "the beginning"} … ${stats.until?.toISOString() ?? "now"}`;
  const lines = [
    `${stats.total} records, ${range}`,
    "",
    "hook                      outcome   count",
  ];
  for (const row of stats.byHookOutcome)
    lines.push(`${printable(row.hook).padEnd(25)} ${row.outcome.padEnd(9)} ${row.count}`);
  lines.push("", "policy                    status       count     p50 ms    p99 ms");
  const ms = (v: number | null) => (v === null ? "-" : (Math.round(v * 100) / 100).toString());
  for (const row of stats.byPolicyStatus)
    lines.push(
      `${printable(row.policy).padEnd(25)} ${row.status.padEnd(12)} ${String(row.count).padEnd(9)} ${ms(row.p50Ms).padEnd(9)} ${ms(row.p99Ms)}`,
    );
  return lines;
}

const STATS_HELP = `usage: hookbus audit stats [--since T] [--until T] [--agent ID] [--run ID] [--json] --index URL

Counts records per hook and outcome, and policy outcomes per policy and status with their
latency (p50/p99), over a time range (default: the whole log). Answered by the index only, from
its per-minute counts: exact for any range; p50/p99 within 5 % (10 %-wide latency buckets).
With --agent or --run the range's rows are counted instead. Outcome block counts every refusal:
blocked decisions, and the tool calls the agent SDK's after_llm_call gate or an adapter refused.

  --since T / --until T   ISO-8601 or a duration ago (30s, 15m, 2h, 7d)
  --agent ID              one agent
  --run ID                one run (the context's runId)
  --index URL             postgres://… (env HOOKBUS_INDEX_URL)`;

export const auditStatsCommand: Command = {
  summary: "counts per hook, outcome and policy over a time range (needs the index)",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      index: { type: "string" },
      since: { type: "string" },
      until: { type: "string" },
      agent: { type: "string" },
      run: { type: "string" },
      json: { type: "boolean" },
    });
    if (values.help === true) {
      out.print(STATS_HELP);
      return 0;
    }
    if (positionals.length > 0) {
      out.error(`unexpected argument "${positionals[0]}"\n\n${STATS_HELP}`);
      return 2;
    }
    const namespace = namespaceOf(values);
    const range = {
      ...(values.since === undefined ? {} : { since: parseAuditTime(values.since, "--since") }),
      ...(values.until === undefined ? {} : { until: parseAuditTime(values.until, "--until") }),
      ...(values.agent === undefined ? {} : { agentId: values.agent }),
      ...(values.run === undefined ? {} : { runId: values.run }),
    };
    const indexUrl = requireIndexUrl(values.index);
    const stats = await withAuditSource({ indexUrl, namespace, pool: INDEX_POOL }, (source) =>
      source.stats(range),
    );
    if (values.json === true) out.print(JSON.stringify(stats));
    else for (const line of formatStats(stats)) out.print(line);
    return 0;
  },
};
