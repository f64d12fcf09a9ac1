/** The envelopes' compiled validators, from `schemas/envelope/` (foundation/schema-validator.ts says how). */
import type { z } from "zod";
import {
  compiledValidator,
  readSchemaFile,
  validatorCache,
  type Validator,
} from "../foundation/schema-validator.js";
import {
  CallReply,
  CallRequest,
  ObserveReply,
  ObserveRequest,
  PolicyReply,
  PolicyRequest,
  WireError,
} from "./envelope.js";

/** Every envelope that crosses NATS, by its schema file's name. */
export const ENVELOPE_SCHEMAS = {
  "envelope/call-request": CallRequest,
  "envelope/call-reply": CallReply,
  "envelope/policy-request": PolicyRequest,
  "envelope/policy-reply": PolicyReply,
  "envelope/observe-request": ObserveRequest,
  "envelope/observe-reply": ObserveReply,
  "envelope/error": WireError,
} as const satisfies Record<string, z.ZodType>;

export type EnvelopeSchemaName = keyof typeof ENVELOPE_SCHEMAS;

export const envelopeValidator = validatorCache<EnvelopeSchemaName>((name) =>
  compiledValidator({ name, zod: ENVELOPE_SCHEMAS[name], jsonSchema: readSchemaFile(name) }),
);

export const callRequestValidator = (): Validator<CallRequest> =>
  envelopeValidator("envelope/call-request");
export const callReplyValidator = (): Validator<CallReply> =>
  envelopeValidator("envelope/call-reply");
export const policyRequestValidator = (): Validator<PolicyRequest> =>
  envelopeValidator("envelope/policy-request");
export const policyReplyValidator = (): Validator<PolicyReply> =>
  envelopeValidator("envelope/policy-reply");
