/**
 * Every validator the decision path and the log readers use, by schema name: the hooks'
 * (catalog), the envelopes' (bus), the log record's (log) and the policy outcome's (zod only: its
 * parse fills in `mode`, so ajv cannot stand in). For the property test that holds each compiled
 * validator to zod's answers, and for tools that validate any message by name.
 */
import type { z } from "zod";
import { zodValidator, type Validator } from "../foundation/schema-validator.js";
import { HOOK_NAMES, MODIFYING_HOOK_NAMES } from "../catalog/catalog.js";
import {
  hookSchemaName,
  hookValidator,
  hookValueRoutesToZod,
  hookZodSchema,
  type HookSchemaName,
} from "../catalog/compiled-validators.js";
import {
  ENVELOPE_SCHEMAS,
  envelopeValidator,
  type EnvelopeSchemaName,
} from "../bus/compiled-validators.js";
import { LogRecord } from "../log/record.js";
import { logRecordValidator } from "../log/record-validator.js";
import { PolicyOutcome } from "../merge/outcome.js";

export type ValidatedSchemaName =
  HookSchemaName | EnvelopeSchemaName | "policy-outcome" | "log-record";

/** Schemas whose zod parse is not "accept and return the input as is": never compiled. */
export const ZOD_ONLY: ReadonlySet<ValidatedSchemaName> = new Set(["policy-outcome"]);

/** Every validated schema, hooks first. */
export function validatedSchemaNames(): ValidatedSchemaName[] {
  const names: ValidatedSchemaName[] = [];
  for (const hook of HOOK_NAMES) {
    names.push(hookSchemaName(hook, "event"), hookSchemaName(hook, "context"));
    if ((MODIFYING_HOOK_NAMES as readonly string[]).includes(hook))
      names.push(hookSchemaName(hook, "verdict"), hookSchemaName(hook, "decision"));
  }
  return [
    ...names,
    ...(Object.keys(ENVELOPE_SCHEMAS) as EnvelopeSchemaName[]),
    "policy-outcome",
    "log-record",
  ];
}

function isHookSchema(name: ValidatedSchemaName): name is HookSchemaName {
  return name.startsWith("hooks/");
}

export function zodSchemaFor(name: ValidatedSchemaName): z.ZodType {
  if (isHookSchema(name)) return hookZodSchema(name);
  if (name === "policy-outcome") return PolicyOutcome;
  if (name === "log-record") return LogRecord;
  return ENVELOPE_SCHEMAS[name];
}

const outcome = zodValidator("policy-outcome", PolicyOutcome);

export function validator<T = unknown>(name: ValidatedSchemaName): Validator<T> {
  if (isHookSchema(name)) return hookValidator<T>(name);
  if (name === "policy-outcome") return outcome as Validator<T>;
  if (name === "log-record") return logRecordValidator() as Validator<T>;
  return envelopeValidator<T>(name);
}

/** Whether this value of this schema is validated by zod (its parse changes the value). */
export function routesToZod(name: ValidatedSchemaName, value: unknown): boolean {
  return ZOD_ONLY.has(name) || (isHookSchema(name) && hookValueRoutesToZod(name, value));
}
