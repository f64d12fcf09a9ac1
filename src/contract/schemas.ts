/**
 * The wire contract as JSON Schema, generated from the zod schemas so that a policy worker can
 * be written in any language. `npm run schemas` writes these files to `schemas/`; a test fails
 * when the checked-in files differ from what this produces. Every message type that crosses NATS
 * or lands in the log belongs in this list.
 */
import type { z } from "zod";
import { hookSchemaDocuments, toJsonSchemaDocument } from "../catalog/json-schema.js";
import { ENVELOPE_SCHEMAS } from "../bus/compiled-validators.js";
import { LogRecord } from "../log/record.js";
import { ActionFactsWire } from "../bus/envelope.js";
import { ApprovalEntry } from "../approvals/entry.js";
import { AnswerRequest, ApprovalReply, StatusRequest } from "../approvals/wire.js";
import { PolicyOutcome } from "../merge/outcome.js";
import { RegistryDocument } from "../registry/document.js";
import { DiscoveryReply } from "../observability/discovery-schema.js";
import { AnchorFile, AnchorStatement } from "../audit/anchor.js";
import { SealBatch } from "../log/seal/batch.js";

/** Every message schema but the hooks' (catalog/json-schema.ts writes those), by file name. */
export const MESSAGE_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  "policy-outcome": PolicyOutcome,
  ...ENVELOPE_SCHEMAS,
  "log-record": LogRecord,
  "facts/action-facts": ActionFactsWire,
  registry: RegistryDocument,
  "discovery/reply": DiscoveryReply,
  // Tamper evidence: what `<NS>_SEALS` stores and what `hookbus audit anchor` writes.
  "seal/seal-batch": SealBatch,
  "seal/anchor-statement": AnchorStatement,
  "seal/anchor-file": AnchorFile,
  "approvals/answer-request": AnswerRequest,
  "approvals/status-request": StatusRequest,
  "approvals/reply": ApprovalReply,
  "approvals/entry": ApprovalEntry,
};

export function buildJsonSchemas(): Map<string, Record<string, unknown>> {
  const files = hookSchemaDocuments();
  for (const [name, schema] of Object.entries(MESSAGE_SCHEMAS)) {
    const path = `${name}.schema.json`;
    files.set(path, toJsonSchemaDocument(path, schema, name));
  }
  return files;
}

export function serializeSchema(doc: Record<string, unknown>): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
