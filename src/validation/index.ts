/**
 * Compiled validators for the hot paths: per hook (event, context, verdict, decision), the
 * envelopes and the log record. See validator.ts for how they relate to the zod schemas.
 */
import type {
  Decision,
  HookContext,
  HookEvent,
  HookName,
  ModifyingHookName,
  Verdict,
} from "../catalog/catalog.js";
import type { CallRequest, PolicyReply, PolicyRequest } from "../bus/envelope.js";
import type { LogRecord } from "../log/record.js";
import { hookSchemaName } from "./schema-files.js";
import { validator, type Validator } from "./validator.js";

export {
  allSchemaNames,
  hookSchemaName,
  type HookSchemaKind,
  type SchemaName,
} from "./schema-files.js";
export {
  routesToZod,
  validator,
  ZOD_ONLY,
  type ValidationResult,
  type Validator,
} from "./validator.js";

export interface HookValidators<H extends HookName> {
  event: Validator<HookEvent<H>>;
  context: Validator<HookContext<H>>;
}

export interface ModifyingHookValidators<H extends ModifyingHookName> extends HookValidators<H> {
  verdict: Validator<Verdict<H>>;
  decision: Validator<Decision<H>>;
}

export function hookValidators<H extends HookName>(hook: H): HookValidators<H> {
  return {
    event: validator(hookSchemaName(hook, "event")),
    context: validator(hookSchemaName(hook, "context")),
  };
}

export function modifyingHookValidators<H extends ModifyingHookName>(
  hook: H,
): ModifyingHookValidators<H> {
  return {
    ...hookValidators(hook),
    verdict: validator(hookSchemaName(hook, "verdict")),
    decision: validator(hookSchemaName(hook, "decision")),
  };
}

export const callRequestValidator = (): Validator<CallRequest> =>
  validator("envelope/call-request");
export const policyRequestValidator = (): Validator<PolicyRequest> =>
  validator("envelope/policy-request");
export const policyReplyValidator = (): Validator<PolicyReply> =>
  validator("envelope/policy-reply");
export const logRecordValidator = (): Validator<LogRecord> => validator("log-record");
