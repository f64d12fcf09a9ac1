/**
 * The generated JSON Schemas in `schemas/` (written by `npm run schemas` from the zod schemas):
 * the files a validator is compiled from. Read from the package's own `schemas/` folder, which
 * sits two levels above both `src/validation/` and `dist/validation/`.
 */
import { readFileSync } from "node:fs";
import { HOOK_NAMES, MODIFYING_HOOK_NAMES, type HookName } from "../catalog/catalog.js";

export type HookSchemaKind = "event" | "context" | "verdict" | "decision";

/** Message schemas the decision path and the log readers validate. */
export const MESSAGE_SCHEMA_NAMES = [
  "envelope/call-request",
  "envelope/call-reply",
  "envelope/policy-request",
  "envelope/policy-reply",
  "envelope/observe-request",
  "envelope/observe-reply",
  "envelope/error",
  "policy-outcome",
  "log-record",
] as const;

export type MessageSchemaName = (typeof MESSAGE_SCHEMA_NAMES)[number];
export type HookSchemaName = `hooks/${HookName}.${HookSchemaKind}`;
export type SchemaName = MessageSchemaName | HookSchemaName;

export function hookSchemaName(hook: HookName, kind: HookSchemaKind): HookSchemaName {
  return `hooks/${hook}.${kind}`;
}

/** Every schema name this module can compile, hooks first. */
export function allSchemaNames(): SchemaName[] {
  const names: SchemaName[] = [];
  for (const hook of HOOK_NAMES) {
    names.push(hookSchemaName(hook, "event"), hookSchemaName(hook, "context"));
    if ((MODIFYING_HOOK_NAMES as readonly string[]).includes(hook))
      names.push(hookSchemaName(hook, "verdict"), hookSchemaName(hook, "decision"));
  }
  return [...names, ...MESSAGE_SCHEMA_NAMES];
}

const SCHEMAS_DIR = new URL("../../schemas/", import.meta.url);

export function readSchemaFile(name: SchemaName): Record<string, unknown> {
  const url = new URL(`${name}.schema.json`, SCHEMAS_DIR);
  return JSON.parse(readFileSync(url, "utf8")) as Record<string, unknown>;
}
