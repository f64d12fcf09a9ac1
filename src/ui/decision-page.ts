/**
 * One record: for a decision, the event, every policy's verdict and the merged decision side by
 * side (with the shadow decision and the call's late verdicts); any other record as stored.
 * Values redaction masked or hashed are marked where they appear.
 */
import type { AuditSource } from "../audit/audit-source.js";
import { formatMs } from "../audit/format.js";
import { HookbusError } from "../foundation/errors.js";
import type { DecisionRecord, RecordedOutcome } from "../log/record.js";
import { href, html, type Html } from "./html.js";
import { jsonView, redactedPointers } from "./json-view.js";
import { badge, page } from "./layout.js";
import { readParams, sequence } from "./params.js";
import { checkAgainstLog, logCheckNote } from "./log-check.js";
import type { Bus } from "../bus/bus.js";
import { streamSection } from "./stream-view.js";

function verdict(o: RecordedOutcome, i: number, marks: Map<string, string>): Html {
  const body =
    o.verdict !== undefined
      ? jsonView(o.verdict, `/outcomes/${i}/verdict`, marks)
      : o.rejectedVerdict !== undefined
        ? html`<p class="muted">
            invalid verdict, kept as its digest: sha256 ${o.rejectedVerdict.sha256}
            (${o.rejectedVerdict.bytes} bytes)
          </p>`
        : html`<p class="muted">no verdict</p>`;
  return html`<div class="verdict s-${o.status}">
    <div class="vhead">
      <b>${o.policy}</b>${o.version === undefined ? "" : ` v${o.version}`}
      <span class="tag">${o.mode}</span> <span class="tag">priority ${o.priority}</span>
    </div>
    <div>
      status <b>${o.status}</b> · effect ${o.effect} · ${formatMs(o.latencyMs)} · ${o.failMode}
    </div>
    ${o.error === undefined ? "" : html`<div class="error"><code>${o.error.code}</code> ${o.error.message}</div>`}${body}
  </div>`;
}

function decisionColumns(record: DecisionRecord, marks: Map<string, string>): Html {
  const outcomes = Array.isArray(record.outcomes) ? record.outcomes : [];
  const shadow =
    record.shadow === undefined
      ? ""
      : html`<h3>
            With shadow policies enforced
            ${record.shadow.changed ? html`<span class="tag warn">changed</span>` : html`<span class="tag">same</span>`}
          </h3>
          ${jsonView(record.shadow.decision, "/shadow/decision", marks)}`;
  return html`<section class="columns">
    <div class="col">
      <h2>Event</h2>
      ${jsonView(record.event, "/event", marks)}
      <h3>Context</h3>
      ${jsonView(record.context, "/context", marks)}
    </div>
    <div class="col">
      <h2>Verdicts <span class="muted">(${outcomes.length}, merge order)</span></h2>
      ${outcomes.length === 0 ? html`<p class="muted">no policy was asked</p>` : outcomes.map((o, i) => verdict(o, i, marks))}
    </div>
    <div class="col">
      <h2>Decision ${badge(String(record.decision.outcome))}</h2>
      ${jsonView(record.decision, "/decision", marks)}${shadow}
    </div>
  </section>`;
}

export async function decisionPage(
  source: AuditSource,
  bus: Bus,
  url: URL,
): Promise<Html | undefined> {
  const seq = sequence(readParams(url, ["seq"]), "seq");
  if (seq === undefined)
    throw new HookbusError("HOOKBUS_INVALID_ARGUMENT", "seq: which record? (?seq=N)", {
      argument: "seq",
    });
  const entry = await source.record(seq);
  if (entry === undefined) return undefined;
  const { record } = entry;
  const marks = redactedPointers(record);
  const callId = (record as { callId?: unknown }).callId;
  const check = await checkAgainstLog(bus, entry);
  const related =
    typeof callId === "string"
      ? (await source.callRecords({ ...entry.address, callId })).filter((e) => e.seq !== seq)
      : [];
  const redactedList =
    marks.size === 0
      ? ""
      : html`<p class="redacted-note">
          <span class="tag">redacted</span> ${[...marks].map(([p, a]) => `${p} (${a})`).join(", ")}
        </p>`;
  const head = html`<p>
      <a
        href="${href("/session", { session: entry.address.sessionKey, agent: entry.address.agentId })}"
        >session ${entry.address.sessionKey}</a
      >
      · agent ${entry.address.agentId} · ${record.hook} · ${badge(entry.address.kind)} · stored
      ${entry.storedAt.toISOString()}${typeof callId === "string" ? ` · call ${callId}` : ""}
    </p>
    ${redactedList}`;
  const relatedHtml =
    related.length === 0
      ? ""
      : html`<h2>Other records of this call</h2>
          <ul>
            ${related.map(
              (e) =>
                html`<li>
                  <a href="${href("/decision", { seq: e.seq })}">#${e.seq}</a>
                  ${badge(e.address.kind)}
                  ${e.record.kind === "late" ? html`late verdict of <b>${e.record.policy}</b> after ${formatMs(e.record.latencyMs)}${e.record.wouldHaveBlocked ? " — would have blocked" : ""}` : ""}
                </li>`,
            )}
          </ul>`;
  const body =
    record.kind === "decision"
      ? html`${streamSection(record)}${decisionColumns(record, marks)}`
      : html`<section>
          <h2>Record</h2>
          ${jsonView(record, "", marks)}
        </section>`;
  return page(
    `Record #${seq}`,
    html`${head}${logCheckNote(check, bus.subjects.logStream)}${body}${relatedHtml}`,
  );
}
