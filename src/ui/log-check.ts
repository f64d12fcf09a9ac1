/**
 * The index is a projection; the log is the record. A record page reads the same sequence from
 * the log (with the auditor's credentials) and says whether the index's copy is the log's, so a
 * tampered or stale index row cannot pass for the record.
 */
import type { AuditEntry } from "../audit/query.js";
import type { Bus } from "../bus/bus.js";
import { isHookbusError } from "../foundation/errors.js";
import { fetchEntry } from "../audit/pg/selection.js";
import { canonicalize } from "../foundation/canonical-json.js";
import { isScrubbed, scrubbedCopy } from "../privacy/record-cipher.js";
import { html, type Html } from "./html.js";

export type LogCheck =
  | { kind: "same" }
  /** The index's copy is the log's record with its ciphertext scrubbed by an erasure. */
  | { kind: "erased" }
  | { kind: "different" }
  | { kind: "missing"; code: string; message: string };

export async function checkAgainstLog(bus: Bus, entry: AuditEntry): Promise<LogCheck> {
  try {
    const fromLog = await fetchEntry(bus, entry.seq);
    // An erasure removed the index copy's ciphertext (docs/privacy.md): compare it with the log's
    // record scrubbed the same way, so every clear field must still be the log's.
    const erased = isScrubbed(entry.record);
    const logSide = erased ? scrubbedCopy(fromLog.record) : fromLog.record;
    const same =
      fromLog.subject === entry.subject && canonicalize(logSide) === canonicalize(entry.record);
    if (!same) return { kind: "different" };
    return erased ? { kind: "erased" } : { kind: "same" };
  } catch (error) {
    if (isHookbusError(error)) return { kind: "missing", code: error.code, message: error.message };
    const message = error instanceof Error ? error.message : String(error);
    return { kind: "missing", code: "HOOKBUS_LOG_UNAVAILABLE", message };
  }
}

export function logCheckNote(check: LogCheck, stream: string): Html {
  switch (check.kind) {
    case "same":
      return html`<p class="log-check ok">✓ the log (${stream}) holds this record as shown</p>`;
    case "erased":
      return html`<p class="log-check ok erased">
        ✓ the log (${stream}) holds this record; the index's copy is it without its ciphertext, as
        an erasure leaves it, so its sealed fields read [erased]
      </p>`;
    case "different":
      return html`<p class="log-check bad">
        ✗ the index's copy differs from the log's record at this sequence: trust the log (<code
          >hookbus audit verify</code
        >) and re-index
      </p>`;
    case "missing":
      return html`<p class="log-check bad">
        ✗ not read from the log: <code>${check.code}</code> ${check.message}
      </p>`;
  }
}
