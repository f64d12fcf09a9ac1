/**
 * The hooks' compiled validators (event, context, verdict, decision), from `schemas/hooks/`
 * with zod's catalog schemas as the reference (foundation/schema-validator.ts says how).
 */
import {
  compiledValidator,
  readSchemaFile,
  validatorCache,
  type JsonSchema,
} from "../foundation/schema-validator.js";
import { catalog, isModifyingHook, type HookName } from "./catalog.js";
import type { z } from "zod";

export type HookSchemaKind = "event" | "context" | "verdict" | "decision";
export type HookSchemaName = `hooks/${HookName}.${HookSchemaKind}`;

export function hookSchemaName(hook: HookName, kind: HookSchemaKind): HookSchemaName {
  return `hooks/${hook}.${kind}`;
}

/** The zod schema a hook schema file was generated from. */
export function hookZodSchema(name: HookSchemaName): z.ZodType {
  const [hook, kind] = name.slice("hooks/".length).split(".") as [HookName, HookSchemaKind];
  const spec = catalog[hook];
  if (kind === "event" || kind === "context") return spec[kind];
  if (!isModifyingHook(hook)) throw new Error(`${hook} has no ${kind} schema`);
  return catalog[hook][kind];
}

function paramsNotAnObject(value: unknown): boolean {
  const params = (value as { params?: unknown } | null)?.params;
  return typeof params !== "object" || params === null || Array.isArray(params);
}

/**
 * The tool events turn a non-object tool input into `{input: value}` (ToolInput): those inputs go
 * to zod; every other input stays on the compiled path, where zod would hand it on unchanged.
 */
const TOOL_EVENTS: ReadonlySet<string> = new Set<HookSchemaName>([
  "hooks/before_tool_call.event",
  "hooks/before_tool_result.event",
  "hooks/after_tool_call.event",
]);

/** Whether this value of this hook schema is validated by zod (its parse changes the value). */
export function hookValueRoutesToZod(name: HookSchemaName, value: unknown): boolean {
  return TOOL_EVENTS.has(name) && paramsNotAnObject(value);
}

/**
 * A tool event's `params` as the object branch of its anyOf: ajv tries every branch and builds an
 * error object for each one that fails, on every call; values whose params is not an object go
 * to zod, so only the object branch can apply here. The property test holds it to zod's answers.
 */
function paramsAsObject(schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema>;
  const branches = properties.params!.anyOf as JsonSchema[];
  const object = branches.find((branch) => branch.type === "object");
  if (object === undefined) throw new Error("a tool event's params schema has no object branch");
  return { ...schema, properties: { ...properties, params: object } };
}

/** The compiled validator of one hook schema, compiled once per process on first use. */
export const hookValidator = validatorCache<HookSchemaName>((name) => {
  const toolEvent = TOOL_EVENTS.has(name);
  const schema = readSchemaFile(name);
  return compiledValidator({
    name,
    zod: hookZodSchema(name),
    jsonSchema: toolEvent ? paramsAsObject(schema) : schema,
    ...(toolEvent ? { toZod: paramsNotAnObject } : {}),
  });
});
