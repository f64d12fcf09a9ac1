/**
 * The UI's Approvals page in a real browser (Debian's Chromium through playwright-core) against a
 * real NATS server, PostgreSQL and indexer. The log is written by the real approval pipeline
 * (policy worker, coordinator with its approvals bucket, agent SDK): one request approved through
 * the public API the CLI uses, two left pending (one per agent). The page must list exactly the
 * two unanswered ones with the command that answers them, the settled one with who answered, and
 * render a policy's title and an approver's reason (both XSS payloads) as text.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Bus,
  definePolicy,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
  type ApprovalProgress,
  type PolicyRunner,
} from "../../../src/index.js";
import { startIndexer, type Indexer, type PgPool } from "../../../src/indexer/index.js";
import { approvalSettlements, pendingApprovalDecisions } from "../../../src/audit/pg/query.js";
import { startUiServer, type UiServer } from "../../../src/ui/server.js";
import { IndexAuditSource } from "../../../src/audit/pg/index-source.js";
import { applyRegistry } from "../faults/harness.js";
import { usePostgres } from "../../support/postgres.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { openBrowser, type Browser } from "./browser.js";
import { answerApproval } from "../../../src/approvals/client.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";

const nats = useNatsServer();
const postgres = usePostgres();

/** Would run script in the page if a title or a reason reached it as markup. */
const XSS_TITLE = `<img src=x onerror="window.__xss=1">wire money`;
const XSS_REASON = `ok <script>window.__xss=2</script>`;

/** Asks for approval of every tool call, titled by the call's `title` param. */
const gate = definePolicy({
  name: "gate",
  hooks: {
    before_tool_call(event) {
      const p = event.params as { title?: string };
      return {
        requireApproval: {
          title: p.title ?? `run ${event.toolName}`,
          description: "a person must look at this",
          severity: "high",
          timeoutMs: 3_600_000,
        },
      };
    },
  },
});

const SESSION = "s-ui-approvals";
const ctx = (callId: string, agentId: string) => ({
  agentId,
  sessionKey: SESSION,
  runId: "r-1",
  toolCallId: callId,
});

let namespace: string;
let runner: PolicyRunner;
let coordinator: Coordinator;
let client: HookbusClient;
let pool: PgPool;
let indexer: Indexer;
let ui: UiServer;
let browser: Browser;
const ids: Record<string, string> = {};

/** Starts a call and returns its request id once the request is open (the first progress report). */
async function ask(callId: string, agentId: string, params: Record<string, unknown>) {
  const progress: ApprovalProgress[] = [];
  const result = client.call(
    "before_tool_call",
    ctx(callId, agentId),
    { toolName: "pay", toolCallId: callId, params },
    { callId, onApproval: (report) => progress.push(report) },
  );
  result.catch(() => {});
  const first = await until(() => progress[0], 20_000, `the request of ${callId}`);
  return { result, id: first.id };
}

beforeAll(async () => {
  namespace = uniqueNamespace("uiap");
  await applyRegistry(await nats.connect(), namespace, {
    policies: [{ name: "gate", hooks: ["before_tool_call"], priority: 10, timeoutMs: 4000 }],
  });
  runner = await runPolicy([gate], {
    nc: await nats.connect(),
    namespace,
    state: new MemorySessionStateStore(),
  });
  coordinator = await startCoordinator({ nc: await nats.connect(), namespace, id: "c-ui-ap" });
  client = await HookbusClient.connect({ nc: await nats.connect(), namespace, timeoutMs: 8000 });

  const approved = await ask("call-approved", "agent-a", { amount: 5 });
  ids.approved = approved.id;
  await answerApproval(
    await nats.connect(),
    { id: approved.id, decision: "approve", reason: XSS_REASON, from: "ui-test" },
    { namespace, approver: "alice" },
  );
  expect((await approved.result).decision.outcome).toBe("allow");

  const open = await ask("call-open", "agent-a", { title: XSS_TITLE, amount: 900 });
  ids.open = open.id;
  const other = await ask("call-other", "agent-b", { amount: 1 });
  ids.other = other.id;

  const bus = await Bus.open(await nats.connect(), { namespace });
  ({ pool } = await postgres.database());
  indexer = await startIndexer({ bus, pool });
  await until(
    async () =>
      (await approvalSettlements(pool, namespace, { limit: 10 })).entries.length === 1 &&
      (await pendingApprovalDecisions(pool, namespace, { limit: 10 })).entries.length === 2,
    30_000,
    "the index has the approval records",
  );
  ui = await startUiServer({
    source: new IndexAuditSource(pool, namespace),
    bus,
    natsUrl: nats.url(),
  });
  browser = await openBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  await indexer?.stop();
  await client?.close();
  await coordinator?.stop();
  await runner?.stop();
}, 60_000);

function status(path: string): Promise<{ status: number; body: string }> {
  const url = new URL(path, ui.url);
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on("error", reject)
      .end();
  });
}

describe("the Approvals page", () => {
  it("lists the unanswered requests with the command to answer, and the settled one with who answered", async () => {
    const { page } = browser;
    await page.goto(`${ui.url}/`);
    await page.click("nav >> text=Approvals");
    await page.waitForURL(/\/approvals$/);

    const pending = page.locator("table.approvals-pending tbody tr");
    await expect.poll(() => pending.count()).toBe(2);
    // Newest first: agent-b's request was made last.
    const [first, second] = [pending.nth(0), pending.nth(1)];
    expect(await first.locator("td").nth(1).innerText()).toBe("agent-b");
    expect(await second.locator("td").nth(1).innerText()).toBe("agent-a");
    // The policy's title is text, not markup.
    expect(await second.locator("b.title").innerText()).toBe(XSS_TITLE);
    expect(await second.locator("td").nth(3).innerText()).toBe("pay");
    expect(await second.locator("td").nth(5).innerText()).toBe("high");
    expect(await second.locator("td").nth(8).innerText()).toContain("gate");
    expect(await second.locator("code.id").innerText()).toBe(ids.open);
    expect(await second.locator("pre.command").innerText()).toBe(
      `npx hookbus approvals approve ${ids.open} --as YOUR_NAME --server ${nats.url()} --namespace ${namespace} --reason "…"`,
    );
    const requested = Date.parse(await second.locator("td").nth(6).innerText());
    const expires = Date.parse((await second.locator("td").nth(7).innerText()).split("\n")[0]!);
    expect(expires - requested).toBe(3_600_000);
    // The answered request is not pending.
    expect(await page.locator("table.approvals-pending").innerText()).not.toContain(ids.approved);
    expect(await page.locator("#pending p.note").innerText()).toContain("approver");

    const settled = page.locator("table.approvals-settled tbody tr");
    await expect.poll(() => settled.count()).toBe(1);
    const row = settled.nth(0);
    expect(await row.locator("td").nth(4).innerText()).toBe(ids.approved);
    // The settled request names its tool, its title and the policy that asked.
    expect(await row.locator("td").nth(5).innerText()).toBe("pay");
    expect(await row.locator("b.title").innerText()).toBe("run pay");
    expect(await row.locator("td").nth(6).innerText()).toContain("asked by gate");
    expect(await row.locator("b.resolution").innerText()).toBe("approved");
    expect(await row.locator("td").nth(8).innerText()).toBe("allow");
    const answer = await row.locator(".answer-line").innerText();
    expect(answer).toContain("alice");
    expect(answer).toContain(`approve: “${XSS_REASON}”`);
    expect(answer).toContain("from ui-test");
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    await browser.screenshot("approvals");

    // The settled request links to its pending_approval decision.
    await row.locator("a.decision-link").click();
    await page.waitForURL(/\/decision\?seq=\d+$/);
    expect(await page.locator("main").innerText()).toContain("pending_approval");
    expect(await page.locator("main").innerText()).toContain("call-approved");
  });

  it("filters by agent and state, and pages with the cursor", async () => {
    const { page } = browser;
    await page.goto(`${ui.url}/approvals?agent=agent-b`);
    expect(await page.locator("table.approvals-pending tbody tr").count()).toBe(1);
    expect(await page.locator("code.id").innerText()).toBe(ids.other);
    expect(await page.locator("#settled .empty").innerText()).toBe("No settled requests.");

    await page.goto(`${ui.url}/approvals?state=settled`);
    expect(await page.locator("#pending").count()).toBe(0);
    expect(await page.locator("table.approvals-settled tbody tr").count()).toBe(1);

    await page.goto(`${ui.url}/approvals?state=pending&limit=1`);
    expect(await page.locator("code.id").innerText()).toBe(ids.other);
    await page.click("a.next");
    await page.waitForURL(/cursor=\d+/);
    expect(await page.locator("table.approvals-pending tbody tr").count()).toBe(1);
    expect(await page.locator("code.id").innerText()).toBe(ids.open);
    expect(await page.locator("a.next").count()).toBe(0);
  });

  it("refuses bad parameters with HOOKBUS_INVALID_ARGUMENT naming the parameter", async () => {
    for (const [query, name] of [
      ["state=maybe", "state"],
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["cursor=5", "cursor"],
      ["state=pending&cursor=x", "cursor"],
      ["session=s", "session"],
      ["agent=a&agent=b", "agent"],
      [`agent=${"x".repeat(257)}`, "agent"],
    ] as const) {
      const { status: code, body } = await status(`/approvals?${query}`);
      expect(code, query).toBe(400);
      expect(body, query).toContain("HOOKBUS_INVALID_ARGUMENT");
      expect(body, query).toContain(`${name}:`);
    }
  });
});
