/** The zod schema each generated JSON Schema came from: the reference the compiled validators must match. */
import type { z } from "zod";
import { catalog, isModifyingHook, type HookName } from "../catalog/catalog.js";
import {
  CallReply,
  CallRequest,
  ObserveReply,
  ObserveRequest,
  PolicyReply,
  PolicyRequest,
  WireError,
} from "../bus/envelope.js";
import { LogRecord } from "../log/record.js";
import { PolicyOutcome } from "../merge/outcome.js";
import type { HookSchemaKind, MessageSchemaName, SchemaName } from "./schema-files.js";

// A function, not a constant: catalog/validate.ts imports this module, and the envelopes import
// the catalog, so the schemas may not exist yet while the modules load.
const messages = (): Record<MessageSchemaName, z.ZodType> => ({
  "envelope/call-request": CallRequest,
  "envelope/call-reply": CallReply,
  "envelope/policy-request": PolicyRequest,
  "envelope/policy-reply": PolicyReply,
  "envelope/observe-request": ObserveRequest,
  "envelope/observe-reply": ObserveReply,
  "envelope/error": WireError,
  "policy-outcome": PolicyOutcome,
  "log-record": LogRecord,
});

export function zodSchemaFor(name: SchemaName): z.ZodType {
  if (!name.startsWith("hooks/")) return messages()[name as MessageSchemaName];
  const [hook, kind] = name.slice("hooks/".length).split(".") as [HookName, HookSchemaKind];
  const spec = catalog[hook];
  if (kind === "event" || kind === "context") return spec[kind];
  if (!isModifyingHook(hook)) throw new Error(`${hook} has no ${kind} schema`);
  return catalog[hook][kind];
}
