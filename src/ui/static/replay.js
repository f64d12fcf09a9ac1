// @ts-check
// The replay report view: reads the NDJSON of `hookbus replay --json` in the browser (nothing is
// uploaded) and shows the summary and each record's field diff. Every value is set as text.
const MAX_FILE_BYTES = 64 * 1024 * 1024;
const MAX_ROWS = 5000;
const input = /** @type {HTMLInputElement} */ (document.getElementById("replay-file"));
const onlyChanged = /** @type {HTMLInputElement} */ (document.getElementById("replay-changed"));
const status = /** @type {HTMLElement} */ (document.getElementById("replay-status"));
const summaryBox = /** @type {HTMLElement} */ (document.getElementById("replay-summary"));
const body = /** @type {HTMLTableSectionElement} */ (document.querySelector("#replay tbody"));

/** @type {any[]} */
let results = [];
/** @type {any} */
let summary;

/** @param {string} tag @param {string} [text] @param {string} [className] */
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** @param {unknown} value */
function show(value) {
  if (value === undefined) return "(not set)";
  const text = JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

function renderSummary() {
  summaryBox.replaceChildren();
  if (!summary) return;
  const grid = el("div", undefined, "summary-grid");
  for (const [label, value] of [
    ["records", summary.records],
    ["changed", summary.changed],
    ["unchanged", summary.unchanged],
    ["sessions changed", `${summary.changedSessions} / ${summary.sessions}`],
    ["counterfactual", summary.counterfactual],
    ["incomplete", summary.incomplete],
  ]) {
    const box = el("div");
    box.append(el("b", String(value)), el("span", String(label), "muted"));
    grid.append(box);
  }
  summaryBox.append(grid);
  const byChange = Object.entries(summary.byChange ?? {});
  if (byChange.length > 0)
    summaryBox.append(el("p", `changes: ${byChange.map(([k, n]) => `${k} ×${n}`).join(", ")}`));
  const byPolicy = Object.entries(summary.byPolicy ?? {});
  if (byPolicy.length > 0)
    summaryBox.append(el("p", `caused by: ${byPolicy.map(([k, n]) => `${k} ×${n}`).join(", ")}`));
}

function renderRows() {
  body.replaceChildren();
  const shown = results.filter((r) => !onlyChanged.checked || r.status === "changed");
  for (const r of shown.slice(0, MAX_ROWS)) {
    const tr = el("tr", undefined, r.status === "changed" ? "changed" : "");
    const seq = el("td");
    if (typeof r.seq === "number") {
      const a = /** @type {HTMLAnchorElement} */ (el("a", String(r.seq)));
      a.href = `/decision?seq=${encodeURIComponent(String(r.seq))}`;
      seq.append(a);
    }
    const diff = el("td");
    for (const change of Array.isArray(r.diff) ? r.diff : []) {
      const line = el("div");
      line.append(
        el("b", `${String(change.field)}: `),
        el("span", show(change.before), "diff-before"),
        el("span", " → "),
        el("span", show(change.after), "diff-after"),
      );
      diff.append(line);
    }
    const flags = [r.counterfactual ? "counterfactual" : "", r.incomplete ? "incomplete" : ""]
      .filter(Boolean)
      .join(", ");
    const statusCell = el("td", String(r.status));
    if (flags) statusCell.append(el("div", flags, "muted"));
    tr.append(
      seq,
      statusCell,
      el("td", String(r.hook)),
      el("td", `${r.agentId} · ${r.sessionKey} · ${r.callId}`),
      el("td", String(r.summary ?? r.change ?? "")),
      diff,
      el("td", Array.isArray(r.causes) ? r.causes.join(", ") : ""),
    );
    body.append(tr);
  }
  status.textContent = `${results.length} records in the report; showing ${Math.min(shown.length, MAX_ROWS)}${shown.length > MAX_ROWS ? ` of ${shown.length}` : ""}`;
}

input.addEventListener("change", async () => {
  const file = input.files?.[0];
  if (!file) return;
  if (file.size > MAX_FILE_BYTES) {
    status.textContent = `the file is ${file.size} bytes; this view reads at most ${MAX_FILE_BYTES}`;
    return;
  }
  results = [];
  summary = undefined;
  let bad = 0;
  for (const line of (await file.text()).split("\n")) {
    if (line.trim() === "") continue;
    try {
      const value = JSON.parse(line);
      // Results carry a one-line `summary` string; the last line's `summary` is the counts.
      if (value && typeof value === "object" && typeof value.callId === "string")
        results.push(value);
      else if (value && typeof value.summary === "object" && value.summary !== null)
        summary = value.summary;
      else bad++;
    } catch {
      bad++;
    }
  }
  renderSummary();
  renderRows();
  if (bad > 0) status.textContent += ` (${bad} lines were not replay results)`;
});
onlyChanged.addEventListener("change", renderRows);
