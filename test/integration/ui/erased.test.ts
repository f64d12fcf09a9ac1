/**
 * The UI after a crypto-shredding erasure (issue 36, docs/privacy.md), in a real browser: a
 * session recorded with encryption on (decisions, a block, an observation), indexed, then erased
 * with `hookbus erase`; the search, session and record pages show "[erased]" in every sealed place
 * and keep the clear fields (hook, tool, outcome, policy ids, times), with no plaintext, no
 * ciphertext and no error page. A second session, not erased, shows "[encrypted]" (the UI holds no
 * KEK), so the test also tells the two marks apart.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { definePolicy } from "../../../src/index.js";
import { main } from "../../../src/cli/main.js";
import { IndexAuditSource } from "../../../src/audit/pg/index-source.js";
import { startIndexer, type PgPool } from "../../../src/indexer/index.js";
import { createSigningKey } from "../../../src/log/sign/keys.js";
import { ENCRYPTED_MARK, ERASED_MARK, parseKek } from "../../../src/privacy/index.js";
import { startUiServer, type UiServer } from "../../../src/ui/server.js";
import { usePostgres } from "../../support/postgres.js";
import { startPipeline, until, useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { openBrowser, type Browser } from "./browser.js";

const nats = useNatsServer();
const postgres = usePostgres();

/** Personal text in every sealed place: parameters, the block reason, the reply, the result. */
const SECRET = "Quokka-7731-Marmalade";
const AGENT = "erase-ui-bot";
const ERASED = "sess-forget-me";
const KEPT = "sess-keep-me";
const kek = parseKek(randomBytes(32).toString("hex"), "test");
const privacyKey = createSigningKey();
const privacySeedFile = join(mkdtempSync(join(tmpdir(), "hookbus-ui-erase-")), "privacy.sign.nk");
writeFileSync(privacySeedFile, `${privacyKey.seed}\n`, { mode: 0o600 });

const guard = definePolicy({
  name: "card-guard",
  version: "2.1.0",
  hooks: {
    before_tool_call: (e) =>
      typeof (e.params as { card?: unknown }).card === "string"
        ? { block: true, blockReason: `no card numbers (${JSON.stringify(e.params)})` }
        : undefined,
  },
});
const REGISTRY = {
  policies: [{ name: "card-guard", hooks: ["before_tool_call"], priority: 10 }],
} as const;

let p: Pipeline;
let nc: NatsConnection;
let pool: PgPool;
let ui: UiServer;
let browser: Browser;
/** Bits of the stored ciphertext of the erased session's records: none may reach a page. */
const ciphertexts: string[] = [];

async function record(session: string, n: number): Promise<void> {
  const ctx = { agentId: AGENT, sessionKey: session, runId: `run-${session}` };
  const pay = { toolName: "pay", toolCallId: `pay-${n}`, params: { card: `${SECRET}-${n}` } };
  const paid = await p.client.call("before_tool_call", { ...ctx, toolCallId: `pay-${n}` }, pay, {
    callId: `${session}-pay`,
  });
  expect(paid.decision.outcome).toBe("block");
  const read = {
    toolName: "read_file",
    toolCallId: `read-${n}`,
    params: { path: `/home/${SECRET}/notes` },
  };
  const got = await p.client.call("before_tool_call", { ...ctx, toolCallId: `read-${n}` }, read, {
    callId: `${session}-read`,
  });
  expect(got.decision.outcome).toBe("allow");
  await p.client.observe(
    "after_tool_call",
    { ...ctx, toolCallId: `read-${n}` },
    { ...read, result: `${SECRET} lives here`, durationMs: 3 },
    { eventId: `${session}-obs` },
  );
}

async function erase(indexUrl: string): Promise<void> {
  const lines: string[] = [];
  const out = { print: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
  const args = ["erase", "--session", ERASED, "--reason", "GDPR art. 17, ticket 9", "--by", "dpo"];
  const code = await main(
    [
      ...args,
      ...["--index", indexUrl, "--sign-key-file", privacySeedFile, "--json"],
      ...["--server", nats.url(), "--namespace", p.namespace],
    ],
    out,
  );
  expect(code, lines.join("\n")).toBe(0);
  expect(JSON.parse(lines.join("\n"))).toMatchObject({ keyPurged: true, rowsScrubbed: 3 });
}

beforeAll(async () => {
  p = await startPipeline(nats.url(), {
    registry: structuredClone(REGISTRY) as never,
    policies: [guard],
    coordinator: { privacy: { kek } },
  });
  await record(ERASED, 1);
  await record(KEPT, 2);
  for (const stored of await p.readLog()) {
    const ct = (stored.record as { encrypted?: { ct?: string } }).encrypted?.ct;
    if (ct !== undefined && stored.record.context.sessionKey === ERASED)
      ciphertexts.push(ct.slice(0, 24), ct.slice(-24));
  }
  expect(ciphertexts.length).toBe(6);
  const db = await postgres.database();
  pool = db.pool;
  const url = db.url;
  const indexer = await startIndexer({ bus: p.bus, pool });
  await until(async () => (await indexer.lag()).records === 0, 30_000, "the index caught up");
  await erase(url);
  await indexer.stop();
  await p.stop();
  // The pipeline's connections end with each test (the harness stops it): the UI has its own.
  nc = await connect({ servers: nats.url(), name: `${p.namespace}-ui` });
  const bus = await Bus.open(nc, { namespace: p.namespace });
  ui = await startUiServer({ source: new IndexAuditSource(pool, p.namespace), bus });
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  await nc?.drain();
}, 30_000);

/** The page's main text, after checking it is a page of the UI and not an error page. */
async function mainText(path: string, title: string | RegExp): Promise<string> {
  const response = await browser.page.goto(`${ui.url}${path}`);
  expect(response?.status(), path).toBe(200);
  await expect.poll(() => browser.page.locator("h1").textContent()).toMatch(title);
  const text = (await browser.page.locator("main").textContent()) ?? "";
  expect(text).not.toContain("HOOKBUS_");
  expect(text).not.toContain(SECRET);
  for (const bit of ciphertexts) expect(text).not.toContain(bit);
  return text;
}

/** The record page of the erased session's `n`th step, reached by clicking; its main text. */
async function openStep(n: number): Promise<string> {
  await mainText(`/session?session=${ERASED}`, `Session ${ERASED}`);
  const steps = browser.page.locator("table.timeline > tbody > tr.step");
  await steps.nth(n).locator("td").first().getByRole("link").click();
  await browser.page.waitForURL(/\/decision\?seq=\d+/);
  return mainText(browser.page.url().slice(ui.url.length), /^Record #\d+$/);
}

describe("an erased session in the UI", () => {
  it("the search shows [erased] for the action and keeps tool, outcome and policy", async () => {
    const text = await mainText(`/?session=${ERASED}&order=oldest`, "Search");
    const rows = browser.page.locator("table.records tbody tr");
    expect(await rows.count()).toBe(3);
    expect(await rows.locator("td.tool").allTextContents()).toEqual([
      "pay",
      "read_file",
      "read_file",
    ]);
    expect(await rows.locator("td.action").allTextContents()).toEqual([
      ERASED_MARK,
      ERASED_MARK,
      ERASED_MARK,
    ]);
    expect(await rows.nth(0).locator(".badge").textContent()).toBe("block");
    expect(await rows.nth(0).locator("td.summary").textContent()).toContain("card-guard");
    expect(await rows.nth(1).locator(".badge").textContent()).toBe("allow");
    expect(text).not.toContain(ENCRYPTED_MARK);
    await browser.screenshot("erased-search");
  });

  it("the timeline keeps hooks, outcomes, policies and times, and shows [erased] for content", async () => {
    const text = await mainText(`/session?session=${ERASED}`, `Session ${ERASED}`);
    const steps = browser.page.locator("table.timeline > tbody > tr.step");
    expect(await steps.count()).toBe(3);
    const [pay, read, observed] = await steps.allTextContents();
    expect(pay).toMatch(/before_tool_call[\s\S]*block[\s\S]*card-guard/);
    expect(pay).toContain(ERASED_MARK);
    expect(read).toMatch(/before_tool_call[\s\S]*allow[\s\S]*card-guard/);
    expect(observed).toContain("after_tool_call");
    const times = await steps.locator("td.nowrap").allTextContents();
    expect(times.every((t) => !Number.isNaN(Date.parse(t)))).toBe(true);
    expect(text).not.toContain(ENCRYPTED_MARK);
    expect(text).not.toContain("could not be read");
    await browser.screenshot("erased-session");
  });

  it("the record page shows every sealed place as [erased] and the clear fields as stored", async () => {
    const recordText = await openStep(0);
    const columns = browser.page.locator("section.columns > .col");
    expect(await columns.count()).toBe(3);
    const [event, verdicts, decision] = await columns.allTextContents();
    expect(event).toContain('"toolName": "pay"');
    expect(event).toContain(`"params": "${ERASED_MARK}"`);
    expect(event).toContain(`"sessionKey": "${ERASED}"`);
    expect(verdicts).toMatch(/card-guard\s*v2\.1\.0/);
    expect(verdicts).toContain("status ok");
    expect(verdicts).toContain(`"${ERASED_MARK}"`);
    expect(await columns.nth(2).locator(".badge").textContent()).toBe("block");
    expect(decision).toContain(`"blockReason": "${ERASED_MARK}"`);
    expect(decision).toContain('"blockedBy": "card-guard"');
    // The log holds this record: the index's erased copy is its clear part, not a tampered one.
    expect(await browser.page.locator(".log-check").getAttribute("class")).toBe(
      "log-check ok erased",
    );
    expect(await browser.page.locator(".log-check").textContent()).toContain(
      "without its ciphertext",
    );
    expect(recordText).not.toContain(ENCRYPTED_MARK);
    await browser.screenshot("erased-decision");
  });

  it("an observation's record page shows [erased] and no ciphertext", async () => {
    const text = await openStep(2);
    expect(text).toContain('"toolName": "read_file"');
    expect(text).toContain(`"result": "${ERASED_MARK}"`);
    expect(text).toContain(`"params": "${ERASED_MARK}"`);
    expect(await browser.page.locator(".log-check").getAttribute("class")).toBe(
      "log-check ok erased",
    );
  });

  it("a session not erased shows [encrypted], never the plaintext, to a UI without the KEK", async () => {
    const response = await browser.page.goto(`${ui.url}/session?session=${KEPT}`);
    expect(response?.status()).toBe(200);
    const text = (await browser.page.locator("main").textContent()) ?? "";
    expect(text).toContain(ENCRYPTED_MARK);
    expect(text).not.toContain(ERASED_MARK);
    expect(text).not.toContain(SECRET);
    expect(await browser.page.locator("table.timeline > tbody > tr.step").count()).toBe(3);
  });

  it("an erased index row edited afterwards is still caught by the record page's log check", async () => {
    const { rows } = await pool.query<{ seq: string }>(
      `UPDATE hookbus_records
          SET record = jsonb_set(record, '{decision,blockedBy}', '"someone-else"')
        WHERE ns = $1 AND call_id = $2 RETURNING seq`,
      [p.namespace, `${ERASED}-pay`],
    );
    expect(rows.length).toBe(1);
    await browser.page.goto(`${ui.url}/decision?seq=${rows[0]!.seq}`);
    expect(await browser.page.locator(".log-check").getAttribute("class")).toBe("log-check bad");
    expect(await browser.page.locator(".log-check").textContent()).toContain("differs");
  });
});
