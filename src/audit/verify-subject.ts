/**
 * Does a record's subject say what its content says? The subject's agent, session, hook and
 * outcome tokens are what readers filter on, so a record moved to another subject (a blocked
 * call filed under `…allow`) must be caught even where its bytes are intact.
 */
import { decodeToken } from "../bus/tokens.js";
import { isHookName } from "../catalog/catalog.js";
import { observationOutcome } from "../log/observation-outcome.js";

/** What differs between the subject and the content ([] when they agree), or why it cannot be read. */
export function subjectMismatches(namespace: string, subject: string, record: unknown): string[] {
  const parts = subject.split(".");
  if (parts.length !== 6 || parts[0] !== namespace || parts[1] !== "audit") {
    return [`the subject ${subject} is not <ns>.audit.<agent>.<session>.<hook>.<outcome>`];
  }
  const [, , agentToken, sessionToken, hookToken, kindToken] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const r = (typeof record === "object" && record !== null ? record : {}) as Record<
    string,
    unknown
  >;
  const context = (typeof r.context === "object" && r.context !== null ? r.context : {}) as Record<
    string,
    unknown
  >;
  const out: string[] = [];
  const lenient = r.kind === "error"; // a rejected call may lack a well-formed context
  const check = (what: string, token: string, value: unknown) => {
    if (lenient && (typeof value !== "string" || value === "")) return;
    let decoded: string;
    try {
      decoded = decodeToken(token);
    } catch {
      out.push(`the ${what} token ${token} does not decode`);
      return;
    }
    if (decoded !== value)
      out.push(
        `${what} ${JSON.stringify(decoded)} in the subject, ${JSON.stringify(value)} in the record`,
      );
  };
  check("agent", agentToken, context.agentId);
  check("session", sessionToken, context.sessionKey);
  const hook =
    r.kind === "error" && !(typeof r.hook === "string" && isHookName(r.hook)) ? "unknown" : r.hook;
  if (hook !== hookToken)
    out.push(`hook ${hookToken} in the subject, ${JSON.stringify(hook)} in the record`);
  const outcome = expectedOutcome(r);
  if (outcome !== kindToken)
    out.push(`outcome ${kindToken} in the subject, ${JSON.stringify(outcome)} in the record`);
  return out;
}

function expectedOutcome(r: Record<string, unknown>): unknown {
  switch (r.kind) {
    case "decision":
      return (r.decision as { outcome?: unknown } | undefined)?.outcome;
    case "error":
      return "error";
    case "late":
      return "late";
    case "observation":
      return observationOutcome(String(r.hook), r.event);
    case "approval":
      return "approval";
    case "erasure":
      return "erasure";
    default:
      return undefined;
  }
}
