/**
 * The approvals page: requests still waiting for a person (pending_approval decisions with no
 * approval record yet) and settled ones (their approval records), read from the index. The page
 * only shows: answering needs the approver's own NATS credentials (docs/security.md), which this
 * server, connected as the auditor, does not have and must not hold. So it shows the command to
 * paste instead.
 */
import type { AuditSource } from "../audit/audit-source.js";
import { HookbusError } from "../foundation/errors.js";
import { checkIndexFilter, type ApprovalIndexPage } from "../audit/pg/query.js";
import { href, html, type Html } from "./html.js";
import { badge, page, tableOrEmpty } from "./layout.js";
import { DEFAULT_UI_LIMIT, MAX_UI_LIMIT, readParams, sequence } from "./params.js";
import {
  answerCommands,
  pendingView,
  settledView,
  type PendingView,
  type SettledView,
} from "./approvals-view.js";

export const APPROVALS_PARAMS = ["agent", "state", "limit", "cursor"] as const;
export const APPROVAL_STATES = ["all", "pending", "settled"] as const;
export type ApprovalStateFilter = (typeof APPROVAL_STATES)[number];

export interface ApprovalsQuery {
  agentId: string | undefined;
  state: ApprovalStateFilter;
  limit: number;
  /** Rows older than this sequence (the "older" link's cursor); one state only. */
  cursor: number | undefined;
}

function invalid(argument: string, message: string): HookbusError {
  return new HookbusError("HOOKBUS_INVALID_ARGUMENT", `${argument}: ${message}`, { argument });
}

export function approvalsQuery(url: URL): ApprovalsQuery {
  const given = readParams(url, APPROVALS_PARAMS);
  const state = given.get("state") ?? "all";
  if (!(APPROVAL_STATES as readonly string[]).includes(state))
    throw invalid(
      "state",
      `expected one of ${APPROVAL_STATES.join(", ")}, got ${JSON.stringify(state.slice(0, 40))}`,
    );
  const limitText = given.get("limit");
  if (
    limitText !== undefined &&
    (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_UI_LIMIT)
  )
    throw invalid(
      "limit",
      `expected an integer from 1 to ${MAX_UI_LIMIT}, got ${JSON.stringify(limitText)}`,
    );
  const cursor = sequence(given, "cursor");
  // A cursor is one list's position: with both lists on the page it would mean two things.
  if (cursor !== undefined && state === "all")
    throw invalid("cursor", "a cursor pages one list: give state=pending or state=settled");
  const agentId = given.get("agent");
  try {
    checkIndexFilter({ agentId });
  } catch (error) {
    if (error instanceof HookbusError) throw invalid("agent", error.message);
    throw error;
  }
  return {
    agentId,
    state: state as ApprovalStateFilter,
    limit: limitText === undefined ? DEFAULT_UI_LIMIT : Number(limitText),
    cursor,
  };
}

function form(q: ApprovalsQuery): Html {
  return html`<form class="filters" method="get" action="/approvals">
    <label>agent<input name="agent" value="${q.agentId ?? ""}" maxlength="256" /></label>
    <label
      >state<select name="state">
        ${APPROVAL_STATES.map(
          (s) => html`<option${s === q.state ? html` selected` : ""}>${s}</option>`,
        )}
      </select></label
    >
    <label>limit<input name="limit" value="${q.limit}" maxlength="4" /></label>
    <button type="submit">Show</button>
  </form>`;
}

function sessionLink(agentId: string, sessionKey: string): Html {
  return html`<a href="${href("/session", { session: sessionKey, agent: agentId })}"
    >${sessionKey}</a
  >`;
}

/** Where a pasted answer must go: the namespace, and the NATS server when the UI knows it. */
export interface AnswerTarget {
  namespace: string;
  natsUrl?: string | undefined;
}

function pendingRow(v: PendingView, target: AnswerTarget, now: Date): Html {
  const expired = v.expiresAt !== undefined && v.expiresAt.getTime() <= now.getTime();
  const commands = answerCommands(v, target.namespace, target.natsUrl);
  return html`<tr class="pending-row">
    <td><a href="${href("/decision", { seq: v.seq })}">${v.seq}</a></td>
    <td class="nowrap">${v.agentId}</td>
    <td>${sessionLink(v.agentId, v.sessionKey)}</td>
    <td>${v.toolName}</td>
    <td class="summary">
      <b class="title">${v.title}</b>
      ${v.description === undefined ? "" : html`<div class="muted">${v.description}</div>`}
    </td>
    <td><span class="tag sev-${v.severity}">${v.severity}</span></td>
    <td class="nowrap">${v.requestedAt.toISOString()}</td>
    <td class="nowrap">
      ${v.expiresAt?.toISOString() ?? "?"}
      ${expired ? html`<div class="tag warn">expired: ${v.timeoutBehavior} applies at the next sweep</div>` : html`<div class="muted">then ${v.timeoutBehavior}</div>`}
    </td>
    <td>
      ${v.askedBy.join(", ")}${v.approvers.length === 0 ? "" : html`<div class="muted">groups: ${v.approvers.join(", ")}</div>`}
    </td>
    <td class="answer">
      <code class="id">${v.approvalId}</code>
      ${commands.map((c) => html`<pre class="command">${c}</pre>`)}
    </td>
  </tr>`;
}

function settledRow(v: SettledView, request: PendingView | undefined): Html {
  return html`<tr class="settled-row">
    <td><a href="${href("/decision", { seq: v.seq })}">${v.seq}</a></td>
    <td>
      ${v.decisionSeq === undefined ? "?" : html`<a class="decision-link" href="${href("/decision", { seq: v.decisionSeq })}">${v.decisionSeq}</a>`}
    </td>
    <td class="nowrap">${v.agentId}</td>
    <td>${sessionLink(v.agentId, v.sessionKey)}</td>
    <td><code>${v.approvalId}</code></td>
    <td>${request?.toolName ?? "?"}</td>
    <td>
      <b class="title">${request?.title ?? "?"}</b
      >${request === undefined || request.askedBy.length === 0 ? "" : html`<div class="muted">asked by ${request.askedBy.join(", ")}</div>`}
    </td>
    <td><b class="resolution">${v.resolution}</b></td>
    <td>${badge(v.effect)}</td>
    <td class="summary">
      ${v.answers.length === 0 ? html`<span class="muted">nobody answered</span>` : ""}
      ${v.answers.map(
        (a) =>
          html`<div class="answer-line">
            <b>${a.approver}</b> (${a.group})
            ${a.decision}${a.reason === undefined ? "" : html`: “${a.reason}”`}
            <span class="muted">from ${a.from ?? "?"} at ${a.at ?? "?"}</span>
          </div>`,
      )}
      ${v.reason === undefined ? "" : html`<div class="muted">${v.reason}</div>`}
    </td>
    <td class="nowrap">${v.requestedAt ?? "?"}</td>
    <td class="nowrap">${v.resolvedAt ?? "?"}</td>
  </tr>`;
}

function olderLink(q: ApprovalsQuery, state: "pending" | "settled", result: ApprovalIndexPage) {
  if (result.nextBefore === undefined) return "";
  return html`<p>
    <a
      class="next"
      href="${href("/approvals", { agent: q.agentId, state, limit: q.limit, cursor: result.nextBefore })}"
      >Older ${state} →</a
    >
  </p>`;
}

function pendingSection(
  q: ApprovalsQuery,
  result: ApprovalIndexPage,
  target: AnswerTarget,
  now: Date,
): Html {
  const rows = result.entries.map((e) => pendingRow(pendingView(e), target, now));
  return html`<section id="pending">
    <h2>
      Pending
      <span class="muted">(${rows.length}${result.nextBefore === undefined ? "" : "+"})</span>
    </h2>
    <p class="note">
      This UI does not answer: an answer must come from the approver's own NATS user (role
      <code>approver</code>, docs/security.md), so that the log proves who answered; this server is
      connected as the auditor. Paste the command in a shell with your approver credentials (use
      <code>deny</code> in place of <code>approve</code> to refuse).
    </p>
    ${tableOrEmpty(
      "records approvals-pending",
      [
        "decision",
        "agent",
        "session",
        "tool",
        "title",
        "severity",
        "requested",
        "expires",
        "asked by",
        "answer with",
      ],
      rows,
      "No pending requests.",
    )}
    ${olderLink(q, "pending", result)}
  </section>`;
}

function settledSection(
  q: ApprovalsQuery,
  result: ApprovalIndexPage,
  requests: Map<number, PendingView>,
): Html {
  const rows = result.entries.map((e) => {
    const view = settledView(e);
    return settledRow(
      view,
      view.decisionSeq === undefined ? undefined : requests.get(view.decisionSeq),
    );
  });
  return html`<section id="settled">
    <h2>
      Settled
      <span class="muted">(${rows.length}${result.nextBefore === undefined ? "" : "+"})</span>
    </h2>
    ${tableOrEmpty(
      "records approvals-settled",
      [
        "record",
        "decision",
        "agent",
        "session",
        "approval",
        "tool",
        "title",
        "resolution",
        "effect",
        "answers",
        "requested",
        "resolved",
      ],
      rows,
      "No settled requests.",
    )}
    ${olderLink(q, "settled", result)}
  </section>`;
}

/** The requests that settled rows answered (their pending decisions), in one query. */
async function requestsOf(
  source: AuditSource,
  settled: ApprovalIndexPage | undefined,
): Promise<Map<number, PendingView>> {
  const seqs = (settled?.entries ?? [])
    .map((e) => settledView(e).decisionSeq)
    .filter((seq): seq is number => seq !== undefined);
  const decisions = await source.records(seqs);
  return new Map(decisions.map((d) => [d.seq, pendingView(d)]));
}

export async function approvalsPage(
  source: AuditSource,
  target: AnswerTarget,
  url: URL,
  now = new Date(),
): Promise<Html> {
  const q = approvalsQuery(url);
  const filter = { agentId: q.agentId, before: q.cursor, limit: q.limit };
  const [pending, settled] = await Promise.all([
    q.state === "settled" ? undefined : source.pendingApprovals(filter),
    q.state === "pending" ? undefined : source.approvalSettlements(filter),
  ]);
  const requests = await requestsOf(source, settled);
  return page(
    "Approvals",
    html`${form(q)}${pending === undefined ? "" : pendingSection(q, pending, target, now)}${settled === undefined ? "" : settledSection(q, settled, requests)}`,
  );
}
