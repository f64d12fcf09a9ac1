/**
 * The compiled validators (ajv, from schemas/) against zod, the reference: for every schema they
 * accept and reject exactly the same values, and what they accept zod returns unchanged (so the
 * compiled path may hand on the value it checked instead of zod's copy).
 */
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  routesToZod,
  validatedSchemaNames,
  validator,
  zodSchemaFor,
  ZOD_ONLY,
} from "../../../src/contract/validators.js";
import { readSchemaFile } from "../../../src/foundation/schema-validator.js";
import { logRecordValidator } from "../../../src/log/record-validator.js";
import { schemaArbitrary } from "./schema-arbitrary.js";

const RUNS = Number(process.env.HOOKBUS_PROPERTY_RUNS ?? 400);
const compiledNames = validatedSchemaNames().filter((name) => !ZOD_ONLY.has(name));

describe("compiled validators accept exactly what zod accepts", () => {
  it.each(compiledNames)("%s", (name) => {
    const compiled = validator(name);
    const zod = zodSchemaFor(name);
    expect(compiled.engine).toBe("ajv");
    let accepted = 0;
    fc.assert(
      fc.property(schemaArbitrary(readSchemaFile(name)), (value) => {
        const reference = zod.safeParse(value);
        expect(compiled.accepts(value)).toBe(reference.success);
        const result = compiled.safeParse(value);
        expect(result.success).toBe(reference.success);
        if (reference.success) {
          accepted++;
          // A value zod changes (a non-object tool input becomes {input}) is zod's to hand on.
          if (routesToZod(name, value)) {
            expect(result.success && result.data).toEqual(reference.data);
            return;
          }
          // zod copies by assignment, so an own "__proto__" key (JSON.parse makes one) becomes its
          // copy's prototype; the compiled path keeps it as the data it was received as (or, for
          // a record's unchecked "__proto__" value, defers to zod and hands on zod's copy).
          if (!hasProtoKey(value)) {
            expect(isDeepStrictEqual(reference.data, value)).toBe(true);
            expect(result.success && result.data).toBe(value);
          }
        } else {
          // A rejection carries zod's own issues, as before the compiled path existed.
          expect(result.success ? [] : result.error.issues).toEqual(reference.error.issues);
        }
      }),
      { numRuns: RUNS },
    );
    // The generator must reach the accepting side, or the property says little.
    expect(accepted).toBeGreaterThan(RUNS / 20);
  });
});

function hasProtoKey(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (Object.hasOwn(value, "__proto__")) return true;
  return Object.values(value).some(hasProtoKey);
}

it("an own __proto__ key passes as data, never as a prototype", () => {
  const event = JSON.parse('{"toolName":"read_file","params":{"__proto__":{"admin":true}}}') as {
    params: Record<string, unknown>;
  };
  const result = validator("hooks/before_tool_call.event").safeParse(event);
  expect(result.success && result.data).toBe(event);
  expect(Object.getPrototypeOf(event.params)).toBe(Object.prototype);
  expect(Object.hasOwn(event.params, "__proto__")).toBe(true);
});

describe("schemas zod parses into something else stay with zod", () => {
  it("policy-outcome fills in mode, so it is validated by zod", () => {
    const outcome = validator("policy-outcome");
    expect(outcome.engine).toBe("zod");
    const result = outcome.safeParse({ policy: "p", priority: 1, status: "ok" });
    expect(result.success && result.data).toMatchObject({ mode: "enforce" });
  });
});

describe("real documents", () => {
  const fixture = readFileSync(new URL("../../fixtures/sessions.ndjson", import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (JSON.parse(line) as { record: unknown }).record);

  it("every recorded session's record is accepted, unchanged", () => {
    const records = logRecordValidator();
    for (const record of fixture) {
      expect(records.accepts(record)).toBe(true);
      expect(zodSchemaFor("log-record").safeParse(record).success).toBe(true);
    }
  });

  it("a record with a forged digest or an unknown field is rejected with zod's issue", () => {
    const records = logRecordValidator();
    const record = structuredClone(fixture[1]) as Record<string, unknown>;
    const forged = { ...record, callDigest: "not-a-digest" };
    expect(records.accepts(forged)).toBe(false);
    const result = records.safeParse(forged);
    expect(result.success).toBe(false);
    expect(result.success ? [] : result.error.issues.map((i) => i.path.join("."))).toContain(
      "callDigest",
    );
    expect(records.accepts({ ...record, admin: true })).toBe(false);
  });

  it("a verdict with a misspelled field is rejected; a loose event keeps unknown fields", () => {
    const tool = {
      verdict: validator("hooks/before_tool_call.verdict"),
      event: validator("hooks/before_tool_call.event"),
    };
    expect(tool.verdict.accepts({ block: true, blockReson: "typo" })).toBe(false);
    const event = { toolName: "read_file", params: { path: "/x" }, providerHint: { cache: 1 } };
    const parsed = tool.event.safeParse(event);
    expect(parsed.success && parsed.data).toBe(event);
  });
});
