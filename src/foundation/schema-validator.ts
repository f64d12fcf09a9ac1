/**
 * Validators compiled from the generated JSON Schemas with ajv, for the paths where zod's cost
 * shows (the decision path, log replay). zod stays the reference: a compiled validator accepts
 * exactly what zod accepts and zod would return the value unchanged (test/unit/validation proves
 * both with property tests), and whatever the compiled validator rejects is re-checked by zod, so
 * errors keep zod's paths and messages. A schema zod parses into something other than its input
 * (a default filled in) is never compiled: it is validated by zod (`zodValidator`).
 *
 * One difference is deliberate: zod copies objects by assignment, so an own `__proto__` key (which
 * JSON.parse creates) becomes the copy's prototype and vanishes from the data; the compiled path
 * hands on the value as received, with `__proto__` an ordinary key, never a prototype. And zod's
 * records skip a `__proto__` key without checking its value, where ajv checks it: that value is
 * rejected by ajv, then re-checked (and accepted) by zod, which hands on its copy.
 *
 * Each layer owns the validators of its own schemas (catalog: hooks; bus: envelopes; log: the
 * record); this module only compiles.
 */
import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { z } from "zod";

export type JsonSchema = Record<string, unknown>;

export type ValidationResult<T> =
  { success: true; data: T } | { success: false; error: z.ZodError };

export interface Validator<T = unknown> {
  /** The schema's name: its path under `schemas/` without `.schema.json`. */
  readonly name: string;
  /** "ajv": compiled from schemas/; "zod": validated by the zod schema. */
  readonly engine: "ajv" | "zod";
  /** True exactly when zod accepts the value (and, compiled, zod would return it unchanged). */
  accepts(value: unknown): value is T;
  /** zod's safeParse result, with the compiled validator on the accepting path. */
  safeParse(value: unknown): ValidationResult<T>;
}

export interface CompiledSchema {
  name: string;
  zod: z.ZodType;
  /** The generated JSON Schema, as compiled (a caller may rewrite it first, exactly). */
  jsonSchema: JsonSchema;
  /** Values zod's parse would change (and only those): they go to zod, never to ajv. */
  toZod?: (value: unknown) => boolean;
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
    // Only where a layer's rewrite adds it: a oneOf decided by one property's const.
    discriminator: true,
    logger: {
      log: () => {},
      warn: () => {},
      error: (...args: unknown[]) => console.error(...args),
    },
  });
  return ajv;
}

export function compiledValidator<T>(spec: CompiledSchema): Validator<T> {
  const compiledCheck: ValidateFunction = compiler().compile(spec.jsonSchema);
  const { toZod, zod } = spec;
  const check = (value: unknown): boolean =>
    (toZod === undefined || !toZod(value)) && compiledCheck(value);
  return {
    name: spec.name,
    engine: "ajv",
    accepts: (value): value is T => check(value) || zod.safeParse(value).success,
    safeParse(value) {
      if (check(value)) return { success: true, data: value as T };
      return zod.safeParse(value) as ValidationResult<T>;
    },
  };
}

export function zodValidator<T>(name: string, zod: z.ZodType): Validator<T> {
  return {
    name,
    engine: "zod",
    accepts: (value): value is T => zod.safeParse(value).success,
    safeParse: (value) => zod.safeParse(value) as ValidationResult<T>,
  };
}

/** The package's own `schemas/` folder: two levels above both `src/foundation/` and `dist/foundation/`. */
const SCHEMAS_DIR = new URL("../../schemas/", import.meta.url);

/** A generated JSON Schema (written by `npm run schemas` from the zod schemas). */
export function readSchemaFile(name: string): JsonSchema {
  const url = new URL(`${name}.schema.json`, SCHEMAS_DIR);
  return JSON.parse(readFileSync(url, "utf8")) as JsonSchema;
}

/** A validator per name, compiled once per process on first use. */
export function validatorCache<N extends string>(
  build: (name: N) => Validator,
): <T = unknown>(name: N) => Validator<T> {
  const cache = new Map<N, Validator>();
  return <T>(name: N) => {
    let found = cache.get(name);
    if (found === undefined) {
      found = build(name);
      cache.set(name, found);
    }
    return found as Validator<T>;
  };
}
