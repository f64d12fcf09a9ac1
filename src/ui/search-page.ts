/** The search page: the index's filters as a form, the charts of the range, and one page of records. */
import type { AuditSource } from "../audit/audit-source.js";
import { AUDIT_OUTCOMES } from "../audit/filter.js";
import { recordAction, recordRunId } from "../audit/action.js";
import { queryRow } from "../audit/format.js";
import { HOOK_NAMES } from "../catalog/catalog.js";
import { MAX_MINUTE_BUCKETS, POLICY_STATUSES } from "../audit/pg/query.js";
import { latencyChart, perMinuteChart } from "./charts.js";
import { href, html, type Html } from "./html.js";
import { badge, page, RECORD_COLUMNS, tableOrEmpty } from "./layout.js";
import { searchQuery, SEARCH_PARAMS } from "./params.js";

const HOUR_MS = 3_600_000;

function input(given: Map<string, string>, name: string, label: string, placeholder = ""): Html {
  return html`<label
    >${label}<input
      name="${name}"
      value="${given.get(name) ?? ""}"
      placeholder="${placeholder}"
      maxlength="256"
  /></label>`;
}

function select(
  given: Map<string, string>,
  name: string,
  label: string,
  options: readonly string[],
): Html {
  const current = given.get(name);
  return html`<label
    >${label}<select name="${name}">
      <option value="">any</option>
      ${options.map((o) => html`<option${o === current ? html` selected` : ""}>${o}</option>`)}
    </select></label
  >`;
}

function form(given: Map<string, string>): Html {
  return html`<form class="filters" method="get" action="/">
    ${input(given, "agent", "agent")}${input(given, "session", "session")}${input(given, "run", "run")}
    ${select(given, "hook", "hook", [...HOOK_NAMES, "unknown"])}${select(given, "outcome", "outcome", AUDIT_OUTCOMES)}
    ${input(given, "policy", "policy")}${select(given, "status", "policy status", POLICY_STATUSES)}
    ${input(given, "blocked-by", "blocked by")}
    ${input(given, "since", "since", "1h, 2026-05-01T10:00Z")}${input(given, "until", "until", "now")}
    ${input(given, "limit", "limit", "50")}
    <label class="check"
      ><input
        type="checkbox"
        name="shadow-changed"
        ${given.has("shadow-changed") ? html` checked` : ""}
      />
      shadow changed</label
    >
    <label
      >order<select name="order">
        <option value="newest">newest first</option>
        <option value="oldest" ${given.get("order") === "oldest" ? html` selected` : ""}>
          oldest first
        </option>
      </select></label
    >
    <button type="submit">Search</button>
  </form>`;
}

async function charts(
  source: AuditSource,
  since: Date | undefined,
  until: Date | undefined,
  only: { agentId?: string | undefined; runId?: string | undefined },
): Promise<Html> {
  const end = until ?? new Date();
  let start = since ?? new Date(end.getTime() - HOUR_MS);
  let note: Html | string = "";
  if (end.getTime() - start.getTime() > MAX_MINUTE_BUCKETS * 60_000) {
    start = new Date(end.getTime() - MAX_MINUTE_BUCKETS * 60_000);
    note = html`<p class="muted">The chart shows the range's last day.</p>`;
  }
  const range = {
    since: start,
    until: end,
    ...(only.agentId === undefined ? {} : { agentId: only.agentId }),
    ...(only.runId === undefined ? {} : { runId: only.runId }),
  };
  const [minutes, stats] = await Promise.all([source.countsPerMinute(range), source.stats(range)]);
  return html`<section class="charts">
    <div>
      <h2>Records per minute by outcome</h2>
      ${perMinuteChart(minutes, start, end)}${note}
    </div>
    <div>
      <h2>Latency per policy</h2>
      ${latencyChart(stats.byPolicyStatus)}
    </div>
  </section>`;
}

export async function searchPage(source: AuditSource, url: URL): Promise<Html> {
  const { filter, given } = searchQuery(url);
  const [result, chartHtml] = await Promise.all([
    source.page(filter),
    charts(source, filter.since, filter.until, filter),
  ]);
  const rows = result.entries.map((entry) => {
    const [time, agent, session, hook, outcome, summary, latency] = queryRow(entry);
    const action = recordAction(entry.record);
    const run = recordRunId(entry.record);
    return html`<tr>
      <td><a href="${href("/decision", { seq: entry.seq })}">${entry.seq}</a></td>
      <td class="nowrap">${time}</td>
      <td>${agent}</td>
      <td>
        <a
          href="${href("/session", { session: entry.address.sessionKey, agent: entry.address.agentId })}"
          >${session}</a
        >${
          run === undefined
            ? ""
            : html`<div class="muted">
                <a href="${href("/", { agent: entry.address.agentId, run })}">run ${run}</a>
              </div>`
        }
      </td>
      <td>${hook}</td>
      <td class="tool">${action.tool ?? ""}</td>
      <td class="action">${action.gist ?? ""}</td>
      <td>${badge(outcome ?? "")}</td>
      <td class="summary">${summary}</td>
      <td class="num">${latency}</td>
    </tr>`;
  });
  const keep: Record<string, string | undefined> = {};
  for (const name of SEARCH_PARAMS) if (name !== "cursor") keep[name] = given.get(name);
  const next =
    result.nextCursor === undefined
      ? ""
      : html`<p>
          <a class="next" href="${href("/", { ...keep, cursor: result.nextCursor })}"
            >Next page →</a
          >
        </p>`;
  const table = tableOrEmpty("records", RECORD_COLUMNS, rows, "No matching records.");
  return page(
    "Search",
    html`${form(given)}${chartHtml}
      <h2>
        Records
        <span class="muted">(${rows.length}${result.nextCursor === undefined ? "" : "+"})</span>
      </h2>
      ${table}${next}`,
  );
}
