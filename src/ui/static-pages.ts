/** The live tail and the replay report: pages whose rows a small script fills (as text, never markup). */
import { AUDIT_OUTCOMES } from "../audit/filter.js";
import { HOOK_NAMES } from "../catalog/catalog.js";
import { html, type Html } from "./html.js";
import { headerRow, page, RECORD_COLUMNS } from "./layout.js";
import { readParams } from "./params.js";

export const TAIL_PARAMS = ["agent", "session", "hook", "outcome", "policy"] as const;

export function tailPage(url: URL): Html {
  const given = readParams(url, TAIL_PARAMS);
  const field = (name: string) =>
    html`<label
      >${name}<input name="${name}" value="${given.get(name) ?? ""}" maxlength="256"
    /></label>`;
  const choice = (name: string, options: readonly string[]) =>
    html`<label
      >${name}<select name="${name}">
        <option value="">any</option>
        ${options.map(
          (o) => html`<option${o === given.get(name) ? html` selected` : ""}>${o}</option>`,
        )}
      </select></label
    >`;
  return page(
    "Live tail",
    html`<form class="filters" method="get" action="/tail">
        ${field("agent")}${field("session")}${choice("hook", HOOK_NAMES)}${choice("outcome", AUDIT_OUTCOMES)}${field("policy")}<button
          type="submit"
        >
          Follow
        </button>
      </form>
      <p id="tail-status" class="muted" aria-live="polite">connecting…</p>
      <table class="records" id="tail">
        ${headerRow(RECORD_COLUMNS)}
        <tbody></tbody>
      </table>
      <p class="muted">
        Records as the log stores them (newest first; the page keeps the last 500). Read from NATS
        with the auditor's credentials.
      </p>`,
    "tail",
  );
}

export function replayPage(url: URL): Html {
  readParams(url, []);
  return page(
    "Replay report",
    html`<p>
        Load the output of <code>hookbus replay … --json &gt; report.ndjson</code>. The file is read
        in this browser; nothing is uploaded.
      </p>
      <form class="filters" id="replay-form">
        <label
          >report<input
            type="file"
            id="replay-file"
            accept=".json,.ndjson,.jsonl,application/json,text/plain"
        /></label>
        <label class="check"
          ><input type="checkbox" id="replay-changed" checked /> only changed records</label
        >
      </form>
      <p id="replay-status" class="muted" aria-live="polite">no report loaded</p>
      <section id="replay-summary"></section>
      <table class="records" id="replay">
        <thead>
          <tr>
            <th>seq</th>
            <th>status</th>
            <th>hook</th>
            <th>agent · session · call</th>
            <th>change</th>
            <th>field diff (recorded → replayed)</th>
            <th>causes</th>
          </tr>
        </thead>
        <tbody></tbody>
      </table>`,
    "replay",
  );
}
