/**
 * `hookbus ui` in a real browser (Debian's Chromium through playwright-core) against a real NATS
 * server, PostgreSQL and indexer. The log is written by the real pipeline (coordinator, policy
 * workers, an agent): a read, a blocked shell call whose parameter is an XSS payload, a policy
 * that times out and answers late, a blocked reply whose content redaction masked, and a call the
 * coordinator rejects. Then: search → session → decision by clicking, the payload rendered as
 * text, the live tail, the replay report view, and the server's refusals.
 */
import { writeFile } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryLog } from "../../../src/audit/index.js";
import { Bus, definePolicy } from "../../../src/index.js";
import { startIndexer, type Indexer, type PgPool } from "../../../src/indexer/index.js";
import { Replayer, ReplaySummarizer, type ReplayResult } from "../../../src/replay/index.js";
import { CONTENT_SECURITY_POLICY, startUiServer, type UiServer } from "../../../src/ui/server.js";
import { IndexAuditSource } from "../../../src/audit/pg/index-source.js";
import { noShellPolicy, sendInvalidToolCall, sloth } from "../../support/audit-scenario.js";
import { usePostgres } from "../../support/postgres.js";
import { startPipeline, until, useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { openBrowser, SCREENSHOTS, type Browser } from "./browser.js";

const nats = useNatsServer();
const postgres = usePostgres();

const AGENT = "ui-bot";
const SESSION = "conv-ui";
/** Would run script in the page if any record content reached it as markup. */
const XSS = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`;

/** The candidate of the replay: also blocks reading files. */
const noShellStrict = definePolicy({
  name: "no-shell",
  version: "2.0.0",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "exec" || event.toolName === "read_file"
        ? { block: true, blockReason: "no tools at all" }
        : undefined,
  },
});
const dlp = definePolicy({
  name: "dlp",
  hooks: {
    before_response_emit: (event) =>
      event.content.includes("password")
        ? { block: true, blockReason: "the reply leaks a password" }
        : undefined,
  },
});

const REGISTRY = {
  policies: [
    { name: "no-shell", hooks: ["before_tool_call"], priority: 100 },
    {
      name: "sloth",
      hooks: ["before_llm_call"],
      priority: 10,
      timeoutMs: 250,
      failMode: "fail-open",
    },
    { name: "dlp", hooks: ["before_response_emit"], priority: 50 },
  ],
  redact: [
    { hooks: ["before_response_emit"], pointer: "/event/content", action: "mask", when: "block" },
    {
      hooks: ["before_response_emit"],
      pointer: "/event/allContent/*",
      action: "mask",
      when: "block",
    },
  ],
} as const;

const ctx = { agentId: AGENT, sessionKey: SESSION, runId: "run-1" };

async function pipeline(namespace?: string): Promise<Pipeline> {
  return startPipeline(nats.url(), {
    registry: structuredClone(REGISTRY) as never,
    policies: [noShellPolicy("1.0.0"), sloth, dlp],
    ...(namespace === undefined ? {} : { namespace }),
  });
}

async function toolCall(
  p: Pipeline,
  callId: string,
  toolName: string,
  params: Record<string, unknown>,
) {
  return p.client.call(
    "before_tool_call",
    { ...ctx, toolCallId: `t-${callId}` },
    { toolName, toolCallId: `t-${callId}`, params },
    { callId },
  );
}

let namespace: string;
let nc: NatsConnection;
let bus: Bus;
let pool: PgPool;
let indexer: Indexer;
let ui: UiServer;
let browser: Browser;
/** After the scenario's records and before any test adds one. */
let logWritten: Date;

beforeAll(async () => {
  const p = await pipeline();
  namespace = p.namespace;
  expect((await toolCall(p, "read-1", "read_file", { path: "/etc/motd" })).decision.outcome).toBe(
    "allow",
  );
  expect((await toolCall(p, "exec-xss", "exec", { command: XSS })).decision.outcome).toBe("block");
  const slow = await p.client.call(
    "before_llm_call",
    ctx,
    { messages: [{ role: "user", content: "hello" }], model: "slow" },
    { callId: "llm-slow" },
  );
  expect(slow.decision.outcome).toBe("allow");
  await until(
    async () => {
      for await (const e of queryLog(p.bus, { outcome: "late" }))
        if (e.record.kind === "late") return true;
      return false;
    },
    10_000,
    "sloth's late verdict in the log",
  );
  const emitted = await p.client.call(
    "before_response_emit",
    ctx,
    { content: "my password is hunter2", allContent: ["my password is hunter2"] },
    { callId: "emit-1" },
  );
  expect(emitted.decision.outcome).toBe("block");
  // A call the coordinator rejects (its event fails the schema), sent raw as a broken agent would.
  expect(await sendInvalidToolCall(p, "bad-1", ctx)).toBe("HOOKBUS_INVALID_EVENT");
  await p.stop();

  nc = await connect({ servers: nats.url(), name: `${namespace}-ui` });
  bus = await Bus.open(nc, { namespace });
  ({ pool } = await postgres.database());
  indexer = await startIndexer({ bus, pool });
  await until(async () => (await indexer.lag()).records === 0, 30_000, "the index caught up");
  logWritten = new Date();
  ui = await startUiServer({ source: new IndexAuditSource(pool, namespace), bus });
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  await indexer?.stop();
  await nc?.drain();
}, 30_000);

describe("search → session → decision", () => {
  it("shows the records, filters them, and clicks through to a session and a decision", async () => {
    const { page } = browser;
    await page.goto(`${ui.url}/`);
    const rows = page.locator("table.records tbody tr");
    await expect.poll(() => rows.count()).toBe(6);
    // It opens on the newest record: sequences fall down the page.
    const seqs = (await rows.locator("td:first-child").allTextContents()).map(Number);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(await rows.first().textContent()).toContain("HOOKBUS_INVALID_EVENT");
    // Each tool call's row names the tool and what it did, not only a call id.
    const exec = rows.filter({ hasText: "no-shell" });
    expect(await exec.locator("td.tool").textContent()).toBe("exec");
    expect(await exec.locator("td.action").textContent()).toContain("<img");
    const read = rows.filter({ hasText: "/etc/motd" });
    expect(await read.locator("td.tool").textContent()).toBe("read_file");
    expect(await read.locator("td.action").textContent()).toBe("/etc/motd");
    expect(await read.textContent()).toContain("run run-1");
    expect(await page.locator("svg.chart rect.o-block").count()).toBeGreaterThan(0);
    expect(await page.locator("svg.chart").nth(1).textContent()).toContain("no-shell");
    await browser.screenshot("search");

    await page.selectOption("select[name=outcome]", "block");
    await page.click("form.filters button");
    await page.waitForURL(/outcome=block/);
    await expect.poll(() => rows.count()).toBe(2);
    const texts = await rows.allTextContents();
    expect(texts[0]).toContain("dlp");
    expect(texts[1]).toContain("no-shell");
    await browser.screenshot("search-blocked");

    await rows.nth(1).getByRole("link", { name: SESSION }).click();
    await page.waitForURL(/\/session\?/);
    expect(await page.locator("h1").textContent()).toBe(`Session ${SESSION}`);
    const steps = page.locator("table.timeline > tbody > tr.step");
    await expect.poll(() => steps.count()).toBe(6);
    // The session's steps are grouped by run, under a header naming it.
    const runs = page.locator("table.timeline > tbody > tr.run-header");
    expect(await runs.allTextContents()).toEqual([expect.stringContaining("run run-1")]);
    const timeline = await steps.allTextContents();
    expect(timeline[1]).toContain("no-shell");
    expect(timeline[1]).toContain("block");
    expect(timeline[2]).toMatch(/sloth\s*timeout/);
    expect(timeline[3]).toContain("late verdict of sloth");
    expect(timeline[3]).toContain("would have blocked");
    expect(timeline[4]).toContain("redacted");
    expect(timeline[4]).toContain("/event/content (mask)");
    expect(timeline[5]).toContain("HOOKBUS_INVALID_EVENT");
    // Each policy's latency as a bar: the timed-out policy's bar is the widest.
    const bars = page.locator("table.policies svg.bar rect:not(.track)");
    expect(await bars.count()).toBeGreaterThanOrEqual(4);
    expect(await page.locator("table.policies svg.bar rect.s-timeout").count()).toBe(1);
    await browser.screenshot("session");

    await steps.nth(1).locator("td").first().getByRole("link").click();
    await page.waitForURL(/\/decision\?seq=\d+/);
    const columns = page.locator("section.columns > .col");
    expect(await columns.count()).toBe(3);
    expect(await columns.nth(0).textContent()).toContain("exec");
    expect(await columns.nth(1).textContent()).toMatch(/no-shell\s*v1\.0\.0/);
    expect(await columns.nth(1).textContent()).toContain("status ok");
    expect(await columns.nth(2).locator(".badge").textContent()).toBe("block");
    expect(await columns.nth(2).textContent()).toContain("shell access is not allowed");
    expect(await page.locator(".log-check.ok").textContent()).toContain("holds this record");
    await browser.screenshot("decision");
  });

  it("a decision with a late verdict links it; redacted values are marked", async () => {
    const { page } = browser;
    await page.goto(`${ui.url}/session?session=${SESSION}&agent=${AGENT}`);
    await page
      .locator("table.timeline > tbody > tr.step")
      .nth(2)
      .locator("td")
      .first()
      .getByRole("link")
      .click();
    await page.waitForURL(/\/decision\?seq=\d+/);
    expect(await page.locator("h2", { hasText: "Other records of this call" }).count()).toBe(1);
    expect(await page.locator("main").textContent()).toContain("late verdict of sloth");
    await page.goto(`${ui.url}/session?session=${SESSION}`);
    await page
      .locator("table.timeline > tbody > tr.step")
      .nth(4)
      .locator("td")
      .first()
      .getByRole("link")
      .click();
    const marks = page.locator("mark.redacted");
    expect(await marks.count()).toBe(2);
    expect(await marks.first().textContent()).toContain("redacted: mask");
    expect(await page.locator("main").textContent()).not.toContain("hunter2");
    await browser.screenshot("decision-redacted");
  });
});

describe("record content is text, never markup", () => {
  it("an XSS payload in a tool parameter renders as text on every page and runs nothing", async () => {
    const { page } = browser;
    const response = await page.goto(`${ui.url}/?hook=before_tool_call`);
    expect(response?.headers()["content-security-policy"]).toBe(CONTENT_SECURITY_POLICY);
    await page.goto(`${ui.url}/session?session=${SESSION}`);
    const execRow = page.locator("table.timeline > tbody > tr.step").nth(1);
    await execRow.locator("td").first().getByRole("link").click();
    await page.waitForURL(/\/decision\?seq=\d+/);
    // The payload is there, as the JSON string the record holds, shown as text.
    expect(await page.locator("section.columns .col").first().textContent()).toContain(
      JSON.stringify(XSS),
    );
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.locator("main script").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    await browser.screenshot("xss");
  });
});

describe("the live tail", () => {
  it("shows a call as the log stores it", async () => {
    const { page } = browser;
    await page.goto(`${ui.url}/tail?agent=${AGENT}`);
    await page.locator("#tail-status", { hasText: "following the log" }).waitFor();
    const p = await pipeline(namespace);
    try {
      expect((await toolCall(p, "live-1", "exec", { command: "<b>ls</b>" })).decision.outcome).toBe(
        "block",
      );
    } finally {
      await p.stop();
    }
    const rows = page.locator("#tail tbody tr");
    await rows.first().waitFor();
    const text = await rows.first().textContent();
    expect(text).toContain(AGENT);
    expect(text).toContain("before_tool_call");
    expect(text).toContain("no-shell");
    expect(await rows.first().locator(".badge").textContent()).toBe("block");
    await browser.screenshot("tail");
    expect(ui.openTails()).toBe(1);
    // Leaving the page ends its tail on the server.
    await page.goto(`${ui.url}/replay`);
    await until(() => ui.openTails() === 0, 20_000, "the tail closed with its page");
  });
});

describe("the replay report view", () => {
  it("loads `hookbus replay --json` output and shows each changed record's field diff", async () => {
    // What `hookbus replay --session conv-ui --json` prints (the same Replayer and summarizer),
    // over the records written before the tests: a stricter no-shell, and no sloth.
    const registry = {
      ...structuredClone(REGISTRY),
      policies: REGISTRY.policies.filter((p) => p.name !== "sloth"),
    };
    const replayer = new Replayer({ policies: [noShellStrict, dlp], registry });
    const summarizer = new ReplaySummarizer();
    const results: ReplayResult[] = [];
    for await (const result of replayer.run(
      queryLog(bus, { sessionKey: SESSION, until: logWritten }),
    )) {
      summarizer.add(result);
      results.push(result);
    }
    const lines = results.map((r) => JSON.stringify(r));
    lines.push(JSON.stringify({ summary: summarizer.summary, stats: replayer.stats }));
    const file = join(SCREENSHOTS, "replay-report.ndjson");
    await writeFile(file, `${lines.join("\n")}\n`);
    const changed = results.filter((r) => r.status === "changed").map((r) => r.callId);
    // read-1 is now blocked, exec-xss blocked for another reason, emit-1's masked content passes.
    expect(changed).toEqual(["read-1", "exec-xss", "emit-1"]);
    expect(results.map((r) => r.callId)).toContain("llm-slow");

    const { page } = browser;
    await page.goto(`${ui.url}/replay`);
    await page.setInputFiles("#replay-file", file);
    const rows = page.locator("#replay tbody tr");
    await expect.poll(() => rows.count()).toBe(changed.length);
    const first = await rows.first().textContent();
    expect(first).toContain("read-1");
    expect(first).toMatch(/outcome: "allow" → "block"/);
    expect(first).toContain("no-shell");
    expect(await rows.nth(1).textContent()).toMatch(
      /blockReason: "shell access is not allowed" → "no tools at all"/,
    );
    expect(await rows.nth(2).textContent()).toContain("incomplete");
    expect(await page.locator("#replay-summary").textContent()).toMatch(/3\s*changed/);
    await browser.screenshot("replay");
    await page.uncheck("#replay-changed");
    await expect.poll(() => rows.count()).toBe(results.length);
    expect(await rows.allTextContents()).toContainEqual(expect.stringContaining("unchanged"));
  });
});

/** fetch() does not let a caller set Host; node:http does (as a rebinding page's browser would). */
function statusWithHost(url: string, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the log is the record", () => {
  it("a record page says so when the index's copy was altered", async () => {
    const seq = Number(
      (
        await pool.query<{ seq: string }>(
          "SELECT seq FROM hookbus_records WHERE ns = $1 AND call_id = 'exec-xss'",
          [namespace],
        )
      ).rows[0]!.seq,
    );
    const alter = (outcome: string) =>
      pool.query(
        `UPDATE hookbus_records SET record = jsonb_set(record::jsonb, '{decision,outcome}', to_jsonb($3::text))::json
         WHERE ns = $1 AND seq = $2`,
        [namespace, seq, outcome],
      );
    await alter("allow");
    try {
      const { page } = browser;
      await page.goto(`${ui.url}/decision?seq=${seq}`);
      expect(await page.locator(".log-check.bad").textContent()).toContain("differs from the log");
      expect(await page.locator(".log-check.ok").count()).toBe(0);
      await browser.screenshot("decision-tampered-index");
    } finally {
      await alter("block");
    }
  });
});

describe("the server refuses what it must", () => {
  it("bad parameters get a coded 400, writes a 405, strangers' Host a 421; no stack traces", async () => {
    const bad = await fetch(`${ui.url}/?limit=100000`);
    expect(bad.status).toBe(400);
    const text = await bad.text();
    expect(text).toContain("HOOKBUS_INVALID_ARGUMENT");
    expect(text).toContain("limit");
    expect(text).not.toMatch(/\bat .*\.ts:\d+/);
    expect((await fetch(`${ui.url}/?nope=1`)).status).toBe(400);
    expect((await fetch(`${ui.url}/?agent=${"a".repeat(300)}`)).status).toBe(400);
    expect((await fetch(`${ui.url}/?outcome=maybe`)).status).toBe(400);
    expect((await fetch(`${ui.url}/decision?seq=-1`)).status).toBe(400);
    expect((await fetch(`${ui.url}/decision?seq=999999`)).status).toBe(404);
    expect((await fetch(`${ui.url}/`, { method: "POST", body: "x" })).status).toBe(405);
    expect((await fetch(`${ui.url}/api/tail`, { method: "HEAD" })).status).toBe(405);
    expect((await fetch(`${ui.url}/`, { method: "HEAD" })).status).toBe(200);
    expect(await statusWithHost(`${ui.url}/`, "evil.example")).toBe(421);
    expect(await statusWithHost(`${ui.url}/`, "localhost")).toBe(200);
    expect((await fetch(`${ui.url}/static/../server.ts`)).status).toBe(404);
    const small = await startUiServer({
      source: new IndexAuditSource(pool, namespace),
      bus,
      maxTails: 1,
    });
    const first = new AbortController();
    try {
      const open = await fetch(`${small.url}/api/tail`, { signal: first.signal });
      expect(open.status).toBe(200);
      const refused = await fetch(`${small.url}/api/tail`);
      expect(refused.status).toBe(429);
      expect(await refused.text()).toContain("HOOKBUS_LIMIT_EXCEEDED");
    } finally {
      first.abort();
      await small.close();
    }
    const css = await fetch(`${ui.url}/static/ui.css`);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(css.headers.get("x-content-type-options")).toBe("nosniff");
  });
});
