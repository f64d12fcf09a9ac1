/** The edge's rules compiled once (they are a constant of this version), for the adapters. */
import { compileStreamRules, StreamRedactor } from "./matcher.js";
import { EDGE_RULES } from "./rules.js";

const EDGE = compileStreamRules(EDGE_RULES);

/** A redactor for one streamed text block with the edge's rules (docs/redaction.md). */
export function edgeRedactor(): StreamRedactor {
  return new StreamRedactor(EDGE);
}
