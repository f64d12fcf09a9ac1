/**
 * `hookbus audit query` and `hookbus audit session` as a user runs them (through `main`), on a
 * real log: the table, NDJSON, the timeline, and coded errors with the right exit codes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { LogRecord } from "../../../src/log/record.js";
import { uniqueNamespace, useNatsServer } from "../pipeline/harness.js";
import { buildAuditLog, EXPECTED, expectedLabels, label, OPS, type AuditLog } from "./fixture.js";

const nats = useNatsServer();

let log: AuditLog;
beforeAll(async () => {
  log = await buildAuditLog(nats.url());
}, 60_000);
afterAll(async () => {
  await log?.close();
});

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
  const [command, sub, ...rest] = args;
  const withConnection =
    sub === undefined || sub.startsWith("-")
      ? args
      : [
          command!,
          sub,
          ...rest,
          "--server",
          nats.url(),
          ...(rest.includes("--namespace") ? [] : ["--namespace", log.namespace]),
        ];
  const code = await main(withConnection, out);
  return { code, stdout, stderr };
}

/** The labels of NDJSON output lines (each a full entry). */
function jsonLabels(lines: string[]): string[] {
  return lines.map((line) => {
    const entry = JSON.parse(line) as { record: unknown };
    return label(LogRecord.parse(entry.record));
  });
}

describe("hookbus audit query", () => {
  it("prints a readable table: time, agent, session, hook, outcome, decided by / reason, latency", async () => {
    const run = await hookbus("audit", "query");
    expect(run.code).toBe(0);
    expect(run.stderr).toEqual([]);
    const [header, ...rest] = run.stdout;
    expect(header).toMatch(
      /^time\s+agent\s+session\s+hook\s+outcome\s+decided by \/ reason\s+latency$/,
    );
    const rows = rest.slice(0, -1);
    expect(rows).toHaveLength(EXPECTED.length);
    expect(rest.at(-1)).toBe(
      `${EXPECTED.length} records (${EXPECTED.length} read from the server, subject filter ${log.namespace}.audit.*.*.*.*)`,
    );
    // Columns line up: every row starts its agent column where the header does.
    const agentAt = header!.indexOf("agent");
    const cells = (row: string) => row.split(/\s{2,}/);
    rows.forEach((row, i) => {
      const want = EXPECTED[i]!;
      expect(row.slice(agentAt).startsWith(want.agentId), row).toBe(true);
      expect(cells(row).slice(1, 5)).toEqual([want.agentId, want.sessionKey, want.hook, want.kind]);
      expect(Number.isNaN(Date.parse(cells(row)[0]!))).toBe(false);
    });
    const row = (id: string) => rows[EXPECTED.findIndex((r) => r.label === id)]!;
    expect(row("exec-1")).toContain("blocked by no-shell: shell access is not allowed");
    expect(row("exec-1")).toMatch(/\d+ ms$/);
    expect(row("bar-1")).toContain("reply by greeter (reason: greeting)");
    expect(row("emit-1")).toContain("content by redactor");
    expect(row("del-1")).toContain(
      "- | shadow would: block (blocked by candidate: destructive tool)",
    );
    expect(row("late:llm-slow")).toMatch(
      /late verdict of sloth \([\d.]+ ms, deadline 250 ms\): would have blocked: too slow to say\s+[\d.]+ ms$/,
    );
    expect(row("bad-1")).toContain("HOOKBUS_INVALID_EVENT: ");
    expect(row("bad-1")).toMatch(/\s-$/);
    expect(row("obs:obs-1")).toContain("tool read_file");
  });

  it("--json prints one entry per line: seq, subject, address, storedAt, record", async () => {
    const run = await hookbus("audit", "query", "--json");
    expect(run.code).toBe(0);
    expect(jsonLabels(run.stdout)).toEqual(EXPECTED.map((r) => r.label));
    const entries = run.stdout.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const [i, entry] of entries.entries()) {
      expect(Object.keys(entry).sort()).toEqual([
        "address",
        "record",
        "seq",
        "storedAt",
        "subject",
      ]);
      expect(entry.subject).toMatch(new RegExp(`^${log.namespace}\\.audit\\.`));
      expect(entry.address).toMatchObject({
        agentId: EXPECTED[i]!.agentId,
        kind: EXPECTED[i]!.kind,
      });
      expect(new Date(entry.storedAt as string).toISOString()).toBe(entry.storedAt);
      if (i > 0) expect(entry.seq).toBeGreaterThan(entries[i - 1]!.seq as number);
    }
  });

  it.each([
    [["--agent", OPS, "--outcome", "block"], ["exec-2"]],
    [["--session", "conv-2"], expectedLabels((r) => r.sessionKey === "conv-2")],
    [
      ["--hook", "before_response_emit"],
      ["emit-1", "emit-2"],
    ],
    [["--outcome", "error"], ["bad-1"]],
    [["--outcome", "late"], ["late:llm-slow"]],
    [["--outcome", "observed"], ["obs:obs-1"]],
    [
      ["--policy", "sloth"],
      ["llm-1", "llm-slow", "late:llm-slow"],
    ],
    [["--shadow-changed"], ["del-1", "rm-1"]],
    [["--limit", "3"], expectedLabels(() => true).slice(0, 3)],
    [["--since", "1h"], expectedLabels(() => true)],
    [["--since", "2099-01-01"], []],
    [["--until", "2000-01-01T00:00:00Z"], []],
  ])("filters %j", async (flags, want) => {
    const run = await hookbus("audit", "query", ...flags, "--json");
    expect(run.code).toBe(0);
    expect(jsonLabels(run.stdout)).toEqual(want);
  });

  it("--since and --until take ISO-8601 times", async () => {
    const iso = log.boundary.toISOString();
    const after = await hookbus("audit", "query", "--since", iso, "--json");
    expect(jsonLabels(after.stdout)).toEqual(expectedLabels((r) => r.phase === "B"));
    const before = await hookbus("audit", "query", "--until", iso, "--json");
    expect(jsonLabels(before.stdout)).toEqual(expectedLabels((r) => r.phase === "A"));
  });

  it("--shadow-changed as a table; an empty result says so", async () => {
    const shadow = await hookbus("audit", "query", "--shadow-changed");
    expect(shadow.code).toBe(0);
    expect(shadow.stdout).toHaveLength(4);
    expect(shadow.stdout.at(-1)).toBe(
      `2 records (${EXPECTED.length} read from the server, subject filter ${log.namespace}.audit.*.*.*.*)`,
    );
    const none = await hookbus("audit", "query", "--agent", "nobody");
    expect(none).toEqual({
      code: 0,
      stdout: [
        `no matching records (0 read from the server, subject filter ${log.namespace}.audit.nobody.*.*.*)`,
      ],
      stderr: [],
    });
  });

  it.each([
    [
      ["--since", "yesterday"],
      /^HOOKBUS_INVALID_ARGUMENT: --since: cannot read "yesterday" as a time/,
    ],
    [["--until", "2026-02-30"], /^HOOKBUS_INVALID_ARGUMENT: --until: /],
    [["--since", "15x"], /^HOOKBUS_INVALID_ARGUMENT: --since: /],
    [["--outcome", "maybe"], /^HOOKBUS_INVALID_ARGUMENT: --outcome: unknown outcome "maybe"/],
    [["--hook", "before_everything"], /^HOOKBUS_INVALID_ARGUMENT: --hook: unknown hook/],
    [["--limit", "0"], /^HOOKBUS_INVALID_ARGUMENT: --limit must be a positive whole number/],
    [["--limit", "ten"], /^HOOKBUS_INVALID_ARGUMENT: --limit/],
    [["--policy", "a.b"], /^HOOKBUS_INVALID_ARGUMENT: --policy: invalid policy name/],
    [["--since", "1h", "--until", "2h"], /^HOOKBUS_INVALID_ARGUMENT: --since: .* is after until/],
    [["--outcome", "late", "--shadow-changed"], /^HOOKBUS_INVALID_ARGUMENT: --shadow-changed: /],
    [["--namespace", "Not_A_Namespace"], /^HOOKBUS_INVALID_ARGUMENT: invalid namespace/],
  ])("bad value %j: a coded error, exit 1", async (flags, message) => {
    const run = await hookbus("audit", "query", ...flags);
    expect(run.code).toBe(1);
    expect(run.stdout).toEqual([]);
    expect(run.stderr[0]).toMatch(message);
  });

  it("a namespace without a log: HOOKBUS_LOG_UNAVAILABLE, exit 1", async () => {
    const run = await hookbus("audit", "query", "--namespace", uniqueNamespace("a"));
    expect(run.code).toBe(1);
    expect(run.stderr[0]).toMatch(/^HOOKBUS_LOG_UNAVAILABLE: no log stream/);
  });

  it("unknown flags, stray arguments and unknown subcommands are usage errors (exit 2)", async () => {
    const flag = await hookbus("audit", "query", "--bogus");
    expect(flag.code).toBe(2);
    expect(flag.stderr.join("\n")).toMatch(/Unknown option '--bogus'/);
    expect((await hookbus("audit", "query", "--shadow-changed=yes")).code).toBe(2);
    expect((await hookbus("audit", "query", "stray")).code).toBe(2);
    expect((await hookbus("audit", "tail", "stray")).code).toBe(2);
    const unknown = await hookbus("audit", "nope");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr[0]).toBe('unknown audit subcommand "nope"');
    const bare = await main(["audit"], { print: () => {}, error: () => {} });
    expect(bare).toBe(2);
  });

  it("--help lists the subcommands and the filters, server-side and client-side", async () => {
    const lines: string[] = [];
    const out: Output = { print: (l) => lines.push(l), error: (l) => lines.push(l) };
    expect(await main(["audit", "--help"], out)).toBe(0);
    expect(lines.join("\n")).toMatch(/query .*\n.*session .*\n.*tail /);
    lines.length = 0;
    expect(await main(["audit", "query", "--help"], out)).toBe(0);
    expect(lines.join("\n")).toContain("server-side");
    expect(lines.join("\n")).toContain("--shadow-changed");
    lines.length = 0;
    expect(await main(["--help"], out)).toBe(0);
    expect(lines.join("\n")).toMatch(/\n\s+audit\s+query the audit log/);
  });
});

describe("hookbus audit session", () => {
  it("prints the timeline: per interception time, hook, outcome, then one line per policy", async () => {
    const run = await hookbus("audit", "session", "conv-2", "--agent", "support-bot");
    expect(run.code).toBe(0);
    expect(run.stderr).toEqual([]);
    const lines = run.stdout;
    expect(lines[0]).toBe("session conv-2 (agent support-bot): 3 records");
    const iso = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`;
    expect(lines[1]).toMatch(
      new RegExp(
        `^${iso}  before_tool_call  allow\\s+\\d+ ms  - \\| shadow would: block \\(blocked by candidate: destructive tool\\)  \\[call del-1\\]$`,
      ),
    );
    expect(lines[2]).toMatch(
      /^\s{4}no-shell\s+enforce\s+ok\s+no-opinion\s+[\d.]+ ms\s+no opinion$/,
    );
    expect(lines[3]).toMatch(
      /^\s{4}candidate\s+shadow\s+ok\s+applied\s+[\d.]+ ms\s+block: destructive tool$/,
    );
    expect(lines[4]).toBe(
      "    shadow: would have been block (blocked by candidate: destructive tool)",
    );
    expect(lines[5]).toMatch(
      new RegExp(`^${iso}  before_llm_call   allow\\s+\\d+ ms  -  \\[call llm-slow\\]$`),
    );
    expect(lines[6]).toMatch(
      /^\s{4}sloth\s+enforce\s+timeout\s+failed-open\s+[\d.]+ ms\s+timeout: HOOKBUS_POLICY_TIMEOUT/,
    );
    expect(lines[7]).toMatch(
      new RegExp(
        `^${iso}  before_llm_call   late\\s+[\\d.]+ ms  late verdict of sloth \\([\\d.]+ ms, deadline 250 ms\\): would have blocked: too slow to say  \\[call llm-slow\\]$`,
      ),
    );
    expect(lines).toHaveLength(8);
  });

  it("names the agent on each line when the session key is shared; shows observations and errors", async () => {
    const shared = await hookbus("audit", "session", "conv-1");
    expect(shared.stdout[0]).toBe("session conv-1 (agent support-bot, other-bot): 7 records");
    expect(shared.stdout.filter((l) => l.includes("[agent other-bot, call other-1]"))).toHaveLength(
      1,
    );
    expect(shared.stdout.find((l) => l.includes("after_tool_call"))).toMatch(
      /after_tool_call\s+observed\s+-\s+tool read_file {2}\[agent support-bot, event obs-1\]$/,
    );
    const night = await hookbus("audit", "session", "night run", "--agent", OPS);
    expect(night.stdout[0]).toBe("session night run (agent ops.bot): 4 records");
    expect(night.stdout.find((l) => l.includes("[call bad-1]"))).toMatch(
      /before_tool_call\s+error\s+-\s+HOOKBUS_INVALID_EVENT: /,
    );
  });

  it("--json prints one timeline entry per line", async () => {
    const run = await hookbus("audit", "session", "conv-2", "--json");
    expect(run.code).toBe(0);
    const steps = run.stdout.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(steps.map((s) => [s.kind, s.callId])).toEqual([
      ["decision", "del-1"],
      ["decision", "llm-slow"],
      ["late", "llm-slow"],
    ]);
    expect(steps[0]).toMatchObject({
      outcome: "allow",
      shadow: { changed: true, outcome: "block", blockedBy: "candidate" },
      policies: [{ policy: "no-shell" }, { policy: "candidate", mode: "shadow" }],
    });
    expect(steps[2]).toMatchObject({ policy: "sloth", wouldHaveBlocked: true, timeoutMs: 250 });
  });

  it("an unknown session is not an error; a missing session key is a usage error", async () => {
    const none = await hookbus("audit", "session", "no-such-session");
    expect(none).toEqual({
      code: 0,
      stdout: ['no records for session "no-such-session"'],
      stderr: [],
    });
    expect((await hookbus("audit", "session")).code).toBe(2);
    expect((await hookbus("audit", "session", "a", "b")).code).toBe(2);
    expect((await hookbus("audit", "session", "a", "--outcome", "block")).code).toBe(2);
  });
});
