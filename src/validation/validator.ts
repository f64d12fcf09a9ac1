/**
 * Validators compiled from the generated JSON Schemas with ajv, for the paths where zod's cost
 * shows (the decision path, log replay). zod stays the reference: a compiled validator accepts
 * exactly what zod accepts and zod would return the value unchanged (test/unit/validation proves
 * both with property tests), and whatever the compiled validator rejects is re-checked by zod, so
 * errors keep zod's paths and messages. A schema zod parses into something other than its input
 * (a default filled in) is never compiled: it is validated by zod (see ZOD_ONLY).
 *
 * One difference is deliberate: zod copies objects by assignment, so an own `__proto__` key (which
 * JSON.parse creates) becomes the copy's prototype and vanishes from the data; the compiled path
 * hands on the value as received, with `__proto__` an ordinary key, never a prototype. And zod's
 * records skip a `__proto__` key without checking its value, where ajv checks it: that value is
 * rejected by ajv, then re-checked (and accepted) by zod, which hands on its copy.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { z } from "zod";
import { readSchemaFile, type SchemaName } from "./schema-files.js";
import { zodSchemaFor } from "./zod-schemas.js";

/**
 * Schemas whose zod parse is not "accept and return the input as is", so ajv cannot stand in:
 * `policy-outcome` fills `mode: "enforce"` when it is absent (a JSON Schema `default` only
 * annotates; ajv's useDefaults would not apply it inside the unions the other schemas use).
 */
export const ZOD_ONLY: ReadonlySet<SchemaName> = new Set<SchemaName>(["policy-outcome"]);

function paramsNotAnObject(value: unknown): boolean {
  const params = (value as { params?: unknown } | null)?.params;
  return typeof params !== "object" || params === null || Array.isArray(params);
}

/**
 * Schemas whose zod parse changes some inputs (and only those): the tool events turn a non-object
 * tool input into `{input: value}` (ToolInput). Those inputs go to zod; every other input stays on
 * the compiled path, where zod would hand the value on unchanged.
 */
const ZOD_WHEN: Partial<Record<SchemaName, (value: unknown) => boolean>> = {
  "hooks/before_tool_call.event": paramsNotAnObject,
  "hooks/before_tool_result.event": paramsNotAnObject,
  "hooks/after_tool_call.event": paramsNotAnObject,
};

/** Whether this value of this schema is validated by zod (its parse changes the value). */
export function routesToZod(name: SchemaName, value: unknown): boolean {
  return ZOD_ONLY.has(name) || ZOD_WHEN[name]?.(value) === true;
}

export type ValidationResult<T> =
  { success: true; data: T } | { success: false; error: z.ZodError };

export interface Validator<T = unknown> {
  readonly name: SchemaName;
  /** "ajv": compiled from schemas/; "zod": validated by the zod schema (ZOD_ONLY). */
  readonly engine: "ajv" | "zod";
  /** True exactly when zod accepts the value (and, compiled, zod would return it unchanged). */
  accepts(value: unknown): value is T;
  /** zod's safeParse result, with the compiled validator on the accepting path. */
  safeParse(value: unknown): ValidationResult<T>;
}

let ajv: Ajv2020 | undefined;

function compiler(): Ajv2020 {
  // unicode: false counts string length in UTF-16 units as zod does; formats are not checked
  // because zod writes each format it checks as a `pattern` too (date-time, the digests).
  // ajv 8 calls `unicode` deprecated but honours it; its notice would print once per process.
  ajv ??= new Ajv2020({
    strict: false,
    unicode: false,
    validateFormats: false,
    allErrors: false,
    // Only where COMPILED_AS adds it: a oneOf decided by one property's const.
    discriminator: true,
    logger: {
      log: () => {},
      warn: () => {},
      error: (...args: unknown[]) => console.error(...args),
    },
  });
  return ajv;
}

const cache = new Map<SchemaName, Validator>();

type JsonSchema = Record<string, unknown>;

/** The tool events' `params`: the object branch of its anyOf (the other branches go to zod). */
function paramsAsObject(schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema>;
  const branches = properties.params!.anyOf as JsonSchema[];
  const object = branches.find((branch) => branch.type === "object");
  if (object === undefined) throw new Error("a tool event's params schema has no object branch");
  return { ...schema, properties: { ...properties, params: object } };
}

/** The log record's oneOf, decided by `kind`: each branch has a distinct `kind` const. */
function recordByKind(schema: JsonSchema): JsonSchema {
  const defs = schema.$defs as Record<string, JsonSchema>;
  return {
    ...schema,
    $defs: {
      ...defs,
      LogRecord: {
        ...defs.LogRecord,
        // ajv applies a discriminator to objects only: a non-object must still fail here.
        type: "object",
        discriminator: { propertyName: "kind" },
      },
    },
  };
}

/**
 * Rewrites for the compiled path, each exact on the values that reach it. ajv tries every branch
 * of an anyOf/oneOf and builds an error object for each one that fails, on every call: a tool
 * event's params (6 branches, validated once per policy) and a log record (5 kinds, once per
 * record read) paid that for every valid value.
 * - Tool events: a value whose params is not an object goes to zod (ZOD_WHEN), so only the object
 *   branch can apply here.
 * - Log records: the kinds are distinct consts, so at most one branch can match; ajv's
 *   discriminator checks only the branch of the value's kind (the same verdict as oneOf).
 * The property test (test/unit/validation) holds the compiled validators to zod's answers.
 */
const COMPILED_AS: Partial<Record<SchemaName, (schema: JsonSchema) => JsonSchema>> = {
  "hooks/before_tool_call.event": paramsAsObject,
  "hooks/before_tool_result.event": paramsAsObject,
  "hooks/after_tool_call.event": paramsAsObject,
  "log-record": recordByKind,
};

function compiled(name: SchemaName, zod: z.ZodType): Validator {
  const schema = readSchemaFile(name);
  const compiledCheck: ValidateFunction = compiler().compile(COMPILED_AS[name]?.(schema) ?? schema);
  const toZod = ZOD_WHEN[name];
  const check = (value: unknown): boolean =>
    (toZod === undefined || !toZod(value)) && compiledCheck(value);
  return {
    name,
    engine: "ajv",
    accepts: (value): value is unknown => check(value) || zod.safeParse(value).success,
    safeParse(value) {
      if (check(value)) return { success: true, data: value };
      return zod.safeParse(value);
    },
  };
}

function zodOnly(name: SchemaName, zod: z.ZodType): Validator {
  return {
    name,
    engine: "zod",
    accepts: (value): value is unknown => zod.safeParse(value).success,
    safeParse: (value) => zod.safeParse(value),
  };
}

/** The validator for one generated schema, compiled once per process on first use. */
export function validator<T = unknown>(name: SchemaName): Validator<T> {
  let found = cache.get(name);
  if (found === undefined) {
    const zod = zodSchemaFor(name);
    found = ZOD_ONLY.has(name) ? zodOnly(name, zod) : compiled(name, zod);
    cache.set(name, found);
  }
  return found as Validator<T>;
}
