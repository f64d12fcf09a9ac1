/**
 * A session's timeline: each interception in log order, who decided what, each policy's latency
 * as a bar (on the session's scale), late verdicts, errors, and which fields redaction masked.
 */
import { recordRunId } from "../audit/action.js";
import type { AuditSource } from "../audit/audit-source.js";
import { toTimelineEntry, type TimelineEntry } from "../audit/timeline.js";
import { formatMs } from "../audit/format.js";
import { HookbusError } from "../foundation/errors.js";
import { latencyBar } from "./charts.js";
import { href, html, type Html } from "./html.js";
import { badge, page, tableOrEmpty } from "./layout.js";
import { readParams } from "./params.js";
import type { AuditEntry } from "../audit/query.js";

/** The most records one timeline page shows. */
export const MAX_TIMELINE_RECORDS = 2000;

function redactedNote(entry: AuditEntry): Html {
  const redacted = (entry.record as { redacted?: unknown }).redacted;
  if (!Array.isArray(redacted) || redacted.length === 0) return html``;
  const paths = redacted.map(
    (r: { path?: unknown; action?: unknown }) => `${String(r.path)} (${String(r.action)})`,
  );
  return html`<div class="redacted-note">
    <span class="tag">redacted</span> ${paths.join(", ")}
  </div>`;
}

function policies(step: TimelineEntry, max: number): Html {
  if (step.kind !== "decision") return html``;
  return html`<table class="policies">
    ${step.policies.map(
      (p) =>
        html`<tr class="s-${p.status}">
          <td>${p.policy}${p.mode === "shadow" ? html` <span class="tag">shadow</span>` : ""}</td>
          <td>${p.status}</td>
          <td>${latencyBar(p.latencyMs, max, p.status)}</td>
          <td class="num">${formatMs(p.latencyMs)}</td>
          <td class="summary">${p.summary}</td>
        </tr>`,
    )}
  </table>`;
}

function stepId(step: TimelineEntry): string {
  if (step.kind === "observation") return step.eventId;
  return step.kind === "erasure" ? step.erasureId : step.callId;
}

function detail(step: TimelineEntry): Html {
  switch (step.kind) {
    case "decision": {
      // Who set each field; the reason's own words are shown apart, as the policy gave them.
      const by = Object.entries(step.decidedBy).map(
        ([field, names]) => `${field}: ${names.join(", ")}`,
      );
      const given =
        step.reason === undefined
          ? ""
          : html`<div class="reason">reason given: “${step.reason}”</div>`;
      const shadow =
        step.shadow?.changed === true
          ? html`<div class="shadow">
              shadow policies would have decided
              <b>${step.shadow.outcome}</b
              >${step.shadow.blockedBy === undefined ? "" : ` (blocked by ${step.shadow.blockedBy})`}
            </div>`
          : "";
      return html`<div>${step.summary}</div>
        ${given}${by.length === 0 ? "" : html`<div class="muted">decided by ${by.join("; ")}</div>`}${shadow}`;
    }
    case "error":
      return html`<div class="error"><code>${step.error.code}</code> ${step.error.message}</div>`;
    case "late":
      return html`<div class="late">
          late verdict of <b>${step.policy}</b> after ${formatMs(step.latencyMs)} (timeout
          ${formatMs(step.timeoutMs)})${step.wouldHaveBlocked ? html` — <b>would have blocked</b>` : ""}
        </div>
        <div class="muted">${step.summary}</div>`;
    case "observation":
      return html`<div>${step.summary}</div>`;
    case "erasure":
      return html`<div class="erasure">${step.summary}</div>`;
    case "approval":
      return html`<div class="approval">
          approval <b>${step.resolution}</b>: the call was told <b>${step.effect}</b> (<a
            href="${href("/decision", { seq: step.decisionSeq })}"
            >the pending decision</a
          >)
        </div>
        ${step.record.answers.map(
          (a) =>
            html`<div class="muted">
              ${a.decision} by
              ${a.approver}${a.group === "-" ? "" : ` for ${a.group}`}${a.reason === undefined ? "" : `: ${a.reason}`}
            </div>`,
        )}`;
  }
}

function row(entry: AuditEntry, max: number): Html {
  let step: TimelineEntry;
  try {
    step = toTimelineEntry(entry);
  } catch {
    // The index keeps records as stored (not re-validated): one odd record must not hide the rest.
    return html`<tr>
      <td><a href="${href("/decision", { seq: entry.seq })}">${entry.seq}</a></td>
      <td colspan="5" class="error">
        this record could not be read as a timeline step; open it to see it as stored
      </td>
    </tr>`;
  }
  const kind = step.kind === "decision" ? step.outcome : entry.address.kind;
  return html`<tr class="step k-${step.kind}">
    <td><a href="${href("/decision", { seq: entry.seq })}">${entry.seq}</a></td>
    <td class="nowrap">${entry.storedAt.toISOString()}</td>
    <td>
      ${step.hook}
      <div class="muted">${stepId(step)}</div>
    </td>
    <td>
      ${badge(kind)}
      <div class="muted">${step.kind === "decision" ? formatMs(step.latencyMs) : ""}</div>
    </td>
    <td>${detail(step)}${redactedNote(entry)}${policies(step, max)}</td>
  </tr>`;
}

/** The run a record belongs to ("" when its context names none). */
function runOf(entry: AuditEntry): string {
  return recordRunId(entry.record) ?? "";
}

/**
 * The timeline's rows with a header row wherever the run changes: a session's turns are its
 * runs, and an operator reads them one run at a time (each header links to the run alone).
 */
function withRunHeaders(entries: AuditEntry[], toRow: (entry: AuditEntry) => Html): Html[] {
  const rows: Html[] = [];
  let current: string | undefined;
  for (const entry of entries) {
    const run = runOf(entry);
    if (run !== current) {
      current = run;
      rows.push(
        html`<tr class="run-header">
          <td colspan="5">
            ${
              run === ""
                ? html`<b>outside any run</b>`
                : html`<b>run ${run}</b>
                    <a
                      href="${href("/session", {
                        session: entry.address.sessionKey,
                        agent: entry.address.agentId,
                        run,
                      })}"
                      >this run alone</a
                    >`
            }
          </td>
        </tr>`,
      );
    }
    rows.push(toRow(entry));
  }
  return rows;
}

export async function sessionPage(source: AuditSource, url: URL): Promise<Html> {
  const params = readParams(url, ["session", "agent", "run"]);
  const sessionKey = params.get("session");
  if (sessionKey === undefined)
    throw new HookbusError("HOOKBUS_INVALID_ARGUMENT", "session: which session? (?session=KEY)", {
      argument: "session",
    });
  const agentId = params.get("agent");
  const entries: AuditEntry[] = [];
  const runId = params.get("run");
  const filter = {
    sessionKey,
    ...(agentId === undefined ? {} : { agentId }),
    ...(runId === undefined ? {} : { runId }),
  };
  for await (const entry of source.query(filter, {
    max: MAX_TIMELINE_RECORDS + 1,
  }))
    entries.push(entry);
  const cut = entries.length > MAX_TIMELINE_RECORDS;
  if (cut) entries.length = MAX_TIMELINE_RECORDS;
  let max = 1;
  for (const e of entries)
    if (e.record.kind === "decision" && Array.isArray(e.record.outcomes))
      for (const o of e.record.outcomes) max = Math.max(max, Number(o.latencyMs) || 0);
  const body = html`${tableOrEmpty(
    "timeline",
    [
      "seq",
      "time",
      "hook / call",
      "outcome",
      `who decided what · each policy's latency (scale: ${formatMs(max)})`,
    ],
    withRunHeaders(entries, (e) => row(e, max)),
    "No records of this session in the index.",
  )}
  ${cut ? html`<p class="muted">Only the first ${MAX_TIMELINE_RECORDS} records are shown; search with ?session= and the cursor for the rest.</p>` : ""}`;
  return page(
    `Session ${sessionKey}`,
    html`<p class="muted">
        ${agentId === undefined ? "all agents" : html`agent <b>${agentId}</b>`}${runId === undefined ? "" : html` · run <b>${runId}</b>`}
        · ${entries.length} record${entries.length === 1 ? "" : "s"} ·
        <a href="${href("/", { session: sessionKey, agent: agentId, run: runId })}">as a search</a>
      </p>
      ${body}`,
  );
}
