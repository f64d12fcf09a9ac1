/**
 * A small JSON Schema (2020-12) checker for the keywords the checked-in files in `schemas/` use.
 * There is no JSON Schema validator among the dependencies; this one throws on any keyword it
 * does not know, so a schema feature it cannot check never makes a test pass by accident.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

type Json = unknown;
type Schema = Record<string, Json>;

const SCHEMAS_DIR = fileURLToPath(new URL("../../schemas/", import.meta.url));

/** Keywords that say nothing about validity. */
export const ANNOTATION_KEYWORDS: readonly string[] = [
  "$id",
  "$schema",
  "title",
  "description",
  "default",
  "$defs",
];
/** Every keyword the checker knows. */
export const KNOWN_KEYWORDS: readonly string[] = [
  ...ANNOTATION_KEYWORDS,
  "$ref",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "items",
  "prefixItems",
  "anyOf",
  "oneOf",
  "enum",
  "const",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "pattern",
  "format",
];

const cache = new Map<string, Schema>();

export function loadSchema(path: string): Schema {
  let doc = cache.get(path);
  if (doc === undefined) {
    doc = JSON.parse(readFileSync(`${SCHEMAS_DIR}${path}`, "utf8")) as Schema;
    cache.set(path, doc);
  }
  return doc;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  if (type === "integer") return typeof value === "number" && Number.isInteger(value);
  if (type === "number") return typeof value === "number" && Number.isFinite(value);
  return typeOf(value) === type;
}

/**
 * The paths where `value` breaks `schema` (empty: valid); `$ref`s resolve in `root`. A keyword
 * not in `keywords` (by default every keyword the checker knows) throws.
 */
export function checkSchema(
  schema: Json,
  value: unknown,
  root: Schema,
  keywords: readonly string[] = KNOWN_KEYWORDS,
): string[] {
  return check(schema, value, root, "", new Set(keywords));
}

function check(
  schema: Json,
  value: unknown,
  root: Schema,
  path: string,
  known: ReadonlySet<string>,
): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: not allowed`];
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    throw new Error(`not a schema at ${path}: ${JSON.stringify(schema)}`);
  const s = schema as Schema;
  for (const key of Object.keys(s))
    if (!known.has(key)) throw new Error(`the checker does not know the keyword ${key}`);
  const errors: string[] = [];
  const fail = (why: string) => errors.push(`${path || "(root)"}: ${why}`);

  if (typeof s.$ref === "string") {
    const match = /^#\/\$defs\/(.+)$/.exec(s.$ref);
    const target = match === null ? undefined : (root.$defs as Schema)[match[1]!];
    if (target === undefined) throw new Error(`unresolvable $ref ${s.$ref}`);
    errors.push(...check(target, value, root, path, known));
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => matchesType(value, t)))
      fail(`is ${typeOf(value)}, not ${types.join("|")}`);
  }
  if ("const" in s && JSON.stringify(s.const) !== JSON.stringify(value))
    fail(`is not ${JSON.stringify(s.const)}`);
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    fail(`is not one of ${JSON.stringify(s.enum)}`);
  if (
    Array.isArray(s.anyOf) &&
    !s.anyOf.some((sub) => check(sub, value, root, path, known).length === 0)
  )
    fail("matches no anyOf branch");
  if (Array.isArray(s.oneOf)) {
    const matching = s.oneOf.filter(
      (sub) => check(sub, value, root, path, known).length === 0,
    ).length;
    if (matching !== 1) fail(`matches ${matching} oneOf branches, not exactly one`);
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof s.minLength === "number" && length < s.minLength) fail("too short");
    if (typeof s.maxLength === "number" && length > s.maxLength) fail("too long");
    if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value))
      fail(`does not match ${s.pattern}`);
    if (s.format === "date-time" && Number.isNaN(Date.parse(value))) fail("is not a date-time");
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) fail(`< ${s.minimum}`);
    if (typeof s.maximum === "number" && value > s.maximum) fail(`> ${s.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) fail("too few items");
    if (typeof s.maxItems === "number" && value.length > s.maxItems) fail("too many items");
    // 2020-12: prefixItems checks the first positions (tuples), items the ones after them.
    const prefix = Array.isArray(s.prefixItems) ? (s.prefixItems as Json[]) : [];
    value.forEach((item, i) => {
      const sub = i < prefix.length ? prefix[i] : s.items;
      if (sub !== undefined) errors.push(...check(sub, item, root, `${path}[${i}]`, known));
    });
  }
  if (typeOf(value) === "object") {
    const object = value as Record<string, unknown>;
    const properties = (s.properties ?? {}) as Record<string, Json>;
    for (const key of (s.required ?? []) as string[])
      if (!(key in object)) fail(`misses required ${key}`);
    for (const [key, v] of Object.entries(object)) {
      const at = path === "" ? key : `${path}.${key}`;
      if (s.propertyNames !== undefined)
        errors.push(...check(s.propertyNames, key, root, at, known));
      if (key in properties) errors.push(...check(properties[key], v, root, at, known));
      else if (s.additionalProperties !== undefined)
        errors.push(...check(s.additionalProperties, v, root, at, known));
    }
  }
  return errors;
}

/** Problems of `value` against `schemas/<path>`; empty when it conforms. */
export function schemaErrors(path: string, value: unknown): string[] {
  const doc = loadSchema(path);
  return checkSchema(doc, value, doc);
}
