// @ts-check
// The live tail page: follows /api/tail (server-sent events) and adds each record as a row.
// Every value is set as text (textContent), never as markup: record content is untrusted.
const MAX_ROWS = 500;
const body = /** @type {HTMLTableSectionElement} */ (document.querySelector("#tail tbody"));
const status = /** @type {HTMLElement} */ (document.getElementById("tail-status"));
let count = 0;

/** @param {string} text @param {string} [className] */
function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

const source = new EventSource(`/api/tail${window.location.search}`);
source.addEventListener("open", () => {
  status.textContent = "following the log: new records appear at the top";
});
source.addEventListener("error", () => {
  status.textContent = "disconnected: reconnecting…";
});
source.addEventListener("message", (event) => {
  /** @type {{seq: number, time: string, agent: string, session: string, run: string, hook: string, tool: string, action: string, outcome: string, summary: string, latency: string}} */
  const row = JSON.parse(event.data);
  const tr = document.createElement("tr");
  const seq = document.createElement("td");
  const link = document.createElement("a");
  link.href = `/decision?seq=${encodeURIComponent(String(row.seq))}`;
  link.textContent = String(row.seq);
  seq.append(link);
  const session = document.createElement("td");
  const sessionLink = document.createElement("a");
  sessionLink.href = `/session?${new URLSearchParams({ session: row.session, agent: row.agent })}`;
  sessionLink.textContent = row.session;
  session.append(sessionLink);
  if (row.run !== "") {
    const run = document.createElement("div");
    run.className = "muted";
    run.textContent = `run ${row.run}`;
    session.append(run);
  }
  const outcome = document.createElement("td");
  const badge = document.createElement("span");
  badge.className = `badge o-${/^[a-z]+$/.test(row.outcome) ? row.outcome : "unknown"}`;
  badge.textContent = row.outcome;
  outcome.append(badge);
  tr.append(
    seq,
    cell(row.time, "nowrap"),
    cell(row.agent),
    session,
    cell(row.hook),
    cell(row.tool, "tool"),
    cell(row.action, "action"),
    outcome,
    cell(row.summary, "summary"),
    cell(row.latency, "num"),
  );
  body.prepend(tr);
  while (body.rows.length > MAX_ROWS) body.deleteRow(-1);
  count++;
  status.textContent = `following the log: ${count} record${count === 1 ? "" : "s"} so far`;
});
