/**
 * `hookbus audit` on the index: a real log (coordinator, workers, agent on a real NATS server)
 * indexed into a real PostgreSQL by the indexer; every filter the log answers gives the same
 * records from the index, the index-only filters (status, blocked-by, cursor) give exactly the
 * expected ones, and query/session/tail/stats work through the CLI. Without the index, a log
 * larger than --max-scan is refused with HOOKBUS_SCAN_TOO_LARGE.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryLog, type AuditFilter } from "../../../src/audit/index.js";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import {
  queryIndex,
  queryIndexAll,
  startIndexer,
  type Indexer,
  type IndexFilter,
  type PgPool,
} from "../../../src/indexer/index.js";
import { readIndexedSelection } from "../../../src/audit/pg/selection.js";
import { LogRecord } from "../../../src/log/record.js";
import { readSelection } from "../../../src/log/selection.js";
import { publishSyntheticLog } from "../../support/synthetic-log.js";
import {
  buildAuditLog,
  collect,
  EXPECTED,
  expectedLabels,
  label,
  labels,
  NIGHT,
  OPS,
  SUPPORT,
  type AuditLog,
} from "../audit/fixture.js";
import { useNatsServer } from "../pipeline/harness.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const postgres = usePostgres();

let log: AuditLog;
let pool: PgPool;
let url: string;
let indexer: Indexer;
beforeAll(async () => {
  log = await buildAuditLog(nats.url());
  ({ pool, url } = await postgres.database());
  indexer = await startIndexer({ bus: log.bus, pool });
  await until(async () => (await indexer.lag()).records === 0, 20_000, "the index caught up");
}, 90_000);
afterAll(async () => {
  await indexer?.stop();
  await log?.close();
});

const all = (filter: IndexFilter) => collect(queryIndexAll(pool, log.namespace, filter));

interface Run {
  code: number;
  stdout: string[];
  stderr: string[];
}

async function hookbus(...args: string[]): Promise<Run> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const out: Output = {
    print: (line) => stdout.push(...line.split("\n")),
    error: (line) => stderr.push(...line.split("\n")),
  };
  const code = await main([...args, "--server", nats.url(), "--namespace", log.namespace], out);
  return { code, stdout, stderr };
}

function jsonLabels(lines: string[]): string[] {
  return lines.map((line) =>
    label(LogRecord.parse((JSON.parse(line) as { record: unknown }).record)),
  );
}

describe("the index answers what the log answers", () => {
  const cases: [string, AuditFilter][] = [
    ["no filter", {}],
    ["agent", { agentId: SUPPORT }],
    ["agent with a dot", { agentId: OPS }],
    ["session with a space", { sessionKey: NIGHT }],
    ["hook", { hook: "before_tool_call" }],
    ["outcome", { outcome: "block" }],
    ["record kind", { outcome: "late" }],
    ["policy (decisions and late verdicts)", { policy: "sloth" }],
    ["shadow changed", { shadowChanged: true }],
    ["agent and outcome", { agentId: SUPPORT, outcome: "allow" }],
  ];
  it.each(cases)("%s", async (_name, filter) => {
    const fromLog = labels(await collect(queryLog(log.bus, filter)));
    expect(fromLog.length).toBeGreaterThan(0);
    expect(labels(await all(filter))).toEqual(fromLog);
  });

  it("since/until: the same records as the log on both sides of the boundary", async () => {
    expect(labels(await all({ since: log.boundary }))).toEqual(
      expectedLabels((r) => r.phase === "B"),
    );
    expect(labels(await all({ until: log.boundary }))).toEqual(
      expectedLabels((r) => r.phase === "A"),
    );
  });
});

describe("filters only the index answers", () => {
  it("--blocked-by: decisions blocked by that policy", async () => {
    expect(labels(await all({ blockedBy: "no-shell" }))).toEqual(["exec-1", "exec-2"]);
  });

  it("--status: a policy that timed out, and late verdicts", async () => {
    expect(labels(await all({ status: "timeout" }))).toEqual(["llm-slow"]);
    expect(labels(await all({ status: "late", policy: "sloth" }))).toEqual(["late:llm-slow"]);
    expect(labels(await all({ status: "timeout", policy: "no-shell" }))).toEqual([]);
  });

  it("--status ok: the decisions where the policy answered, from the log's outcomes", async () => {
    // A policy's ok is an element of its record's array (schema 5), not a row: same answer.
    const answeredOk = (policy: string) =>
      collect(queryLog(log.bus, { policy })).then((entries) =>
        labels(
          entries.filter(
            (e) =>
              e.record.kind === "decision" &&
              e.record.outcomes.some((o) => o.policy === policy && o.status === "ok"),
          ),
        ),
      );
    for (const policy of ["no-shell", "sloth"]) {
      const expected = await answeredOk(policy);
      expect(expected.length, policy).toBeGreaterThan(0);
      expect(labels(await all({ status: "ok", policy })), policy).toEqual(expected);
    }
    const anyOk = labels(
      (await collect(queryLog(log.bus, {}))).filter(
        (e) => e.record.kind === "decision" && e.record.outcomes.some((o) => o.status === "ok"),
      ),
    );
    expect(labels(await all({ status: "ok" }))).toEqual(anyOk);
  });

  it("--limit with --cursor pages through the whole result in log order", async () => {
    const seen: string[] = [];
    let cursor: number | undefined;
    for (let page = 0; page < 10; page++) {
      const result = await queryIndex(pool, log.namespace, {
        limit: 4,
        ...(cursor === undefined ? {} : { cursor }),
      });
      seen.push(...labels(result.entries));
      if (result.nextCursor === undefined) break;
      cursor = result.nextCursor;
    }
    expect(seen).toEqual(EXPECTED.map((r) => r.label));
  });
});

describe("replay's selection through the index", () => {
  it("selects with the index and reads the same records from the log, session by session", async () => {
    const selection = { sessions: ["conv-2", "conv-1"], agentId: SUPPORT };
    const fromIndex = await collect(readIndexedSelection(log.bus, pool, selection));
    const fromLog = await collect(readSelection(log.bus, selection));
    expect(labels(fromIndex)).toEqual(labels(fromLog));
    expect(fromIndex.map((e) => e.seq)).toEqual(fromLog.map((e) => e.seq));
    expect(fromIndex[0]!.record).toEqual(fromLog[0]!.record);
  });
});

describe("hookbus audit --index", () => {
  it("query: the table and a next-page cursor", async () => {
    const run = await hookbus(
      "audit",
      "query",
      "--index",
      url,
      "--hook",
      "before_tool_call",
      "--limit",
      "2",
    );
    expect(run.code).toBe(0);
    expect(run.stdout.at(-1)).toMatch(/^2 records \(index\); next page: --cursor \d+$/);
    const cursor = /--cursor (\d+)/.exec(run.stdout.at(-1)!)![1]!;
    const next = await hookbus(
      "audit",
      "query",
      "--index",
      url,
      "--hook",
      "before_tool_call",
      "--cursor",
      cursor,
      "--json",
    );
    expect(jsonLabels(next.stdout)).toEqual(
      expectedLabels((r) => r.hook === "before_tool_call").slice(2),
    );
  });

  it("query: --blocked-by and --status from the command line; refused without the index", async () => {
    const run = await hookbus(
      "audit",
      "query",
      "--index",
      url,
      "--blocked-by",
      "no-shell",
      "--json",
    );
    expect(jsonLabels(run.stdout)).toEqual(["exec-1", "exec-2"]);
    const noIndex = await hookbus("audit", "query", "--status", "timeout");
    expect(noIndex.code).toBe(1);
    expect(noIndex.stderr.join("\n")).toMatch(/HOOKBUS_INVALID_ARGUMENT: --status needs the index/);
    const bad = await hookbus("audit", "query", "--index", url, "--status", "sleepy");
    expect(bad.stderr.join("\n")).toMatch(
      /HOOKBUS_INVALID_ARGUMENT: --status: unknown status "sleepy"/,
    );
  });

  it("session: the timeline from the index, with who decided what", async () => {
    const run = await hookbus("audit", "session", NIGHT, "--index", url, "--json");
    expect(run.code).toBe(0);
    const steps = run.stdout.map(
      (l) => JSON.parse(l) as { kind: string; blockedBy?: string; hook: string },
    );
    expect(steps.map((s) => s.kind)).toEqual(["decision", "decision", "error", "decision"]);
    expect(steps[0]).toMatchObject({ blockedBy: "no-shell", hook: "before_tool_call" });
    const table = await hookbus("audit", "session", NIGHT, "--index", url);
    expect(table.stdout.join("\n")).toContain("no-shell");
  });

  it("stats: counts per hook and outcome, and per policy and status", async () => {
    const run = await hookbus("audit", "stats", "--index", url, "--json");
    expect(run.code).toBe(0);
    const stats = JSON.parse(run.stdout[0]!) as {
      total: number;
      byHookOutcome: { hook: string; outcome: string; count: number }[];
      byPolicyStatus: { policy: string; status: string; count: number; p99Ms: number | null }[];
    };
    expect(stats.total).toBe(EXPECTED.length);
    expect(stats.byHookOutcome).toContainEqual({
      hook: "before_tool_call",
      outcome: "block",
      count: 2,
    });
    expect(stats.byHookOutcome).toContainEqual({
      hook: "before_tool_call",
      outcome: "allow",
      count: 4,
    });
    expect(stats.byPolicyStatus).toContainEqual(
      expect.objectContaining({ policy: "sloth", status: "timeout", count: 1 }),
    );
    expect(stats.byPolicyStatus).toContainEqual(
      expect.objectContaining({ policy: "sloth", status: "late", count: 1 }),
    );
    expect(stats.byPolicyStatus).toContainEqual(
      expect.objectContaining({ policy: "no-shell", status: "ok", count: 6 }),
    );
    const text = await hookbus("audit", "stats", "--index", url, "--since", "1h");
    expect(text.stdout[0]).toMatch(new RegExp(`^${EXPECTED.length} records, `));
  });

  it("tail: follows records as they are indexed", async () => {
    const lines: string[] = [];
    const out: Output = { print: (l) => lines.push(l), error: () => {} };
    const tail = main(
      [
        "audit",
        "tail",
        "--index",
        url,
        "--json",
        "--limit",
        "3",
        "--namespace",
        log.namespace,
        "--server",
        nats.url(),
      ],
      out,
    );
    // Records published after the tail started reach it through the indexer.
    await until(
      async () => {
        await publishSyntheticLog(log.bus, { records: 1, sessions: 1 }, 0);
        return lines.length >= 3;
      },
      20_000,
      "three tailed records",
    );
    expect(await tail).toBe(0);
    expect(
      lines.map((l) => (JSON.parse(l) as { address: { agentId: string } }).address.agentId),
    ).toEqual(["agent-0", "agent-0", "agent-0"]);
  });

  it("without the index, a log larger than --max-scan is refused with the fix", async () => {
    const run = await hookbus("audit", "query", "--agent", SUPPORT, "--max-scan", "5");
    expect(run.code).toBe(1);
    expect(run.stderr.join("\n")).toMatch(
      /^HOOKBUS_SCAN_TOO_LARGE: the log holds \d+ records, more than this query may scan without the index \(5\): use the index/,
    );
    const session = await hookbus("audit", "session", "conv-1", "--max-scan", "5");
    expect(session.stderr.join("\n")).toMatch(/^HOOKBUS_SCAN_TOO_LARGE/);
    const allowed = await hookbus(
      "audit",
      "query",
      "--agent",
      SUPPORT,
      "--max-scan",
      "0",
      "--json",
    );
    expect(allowed.code).toBe(0);
  });
});
