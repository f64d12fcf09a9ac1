/**
 * The bodies that cross NATS between agent, coordinator and policy workers. Hooks' own payloads
 * (event, context, verdict, decision) are described per hook in `schemas/hooks/`; these
 * envelopes carry them. See docs/protocol.md.
 */
import { z } from "zod";
import { HOOK_NAMES, MODIFYING_HOOK_NAMES } from "../catalog/catalog.js";
import { actionFactsSchema } from "../facts/index.js";
import { ShellFactsSchema } from "../facts/shell/schema.js";

const HookNameSchema = z.enum(HOOK_NAMES as [string, ...string[]]);
const ModifyingHookNameSchema = z.enum(MODIFYING_HOOK_NAMES as [string, ...string[]]);

export const WireError = z
  .looseObject({
    code: z.string().describe("A stable code from docs/errors.md."),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: "WireError" });

/** Agent → coordinator, on `<ns>.call.<agent>.<hook>`. */
/** A request's deadline in its body (protocol 2): docs/protocol.md, "Deadlines in the body". */
const TimeoutMs = z
  .number()
  .optional()
  .describe(
    "How long the sender waits, in ms, from when the request arrives (protocol 2; written first in the body). A number that is not positive names no deadline, as a bad `Hookbus-Timeout-Ms` header does: a coordinator applies its default, a worker none. Absent: the `Hookbus-Timeout-Ms` header says it (gzip and blob bodies, senders before protocol 2); present, it wins over the header.",
  );

export const CallRequest = z
  .strictObject({
    timeoutMs: TimeoutMs,
    callId: z
      .string()
      .min(1)
      .max(256)
      .describe("Unique per call; a retry of the same call reuses it (the log stores it once)."),
    hook: ModifyingHookNameSchema,
    context: z.record(z.string(), z.unknown()),
    event: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "CallRequest" });

/** Coordinator → agent: the merged decision, released only after its record is stored. */
export const CallReply = z
  .strictObject({
    callId: z.string(),
    hook: ModifyingHookNameSchema,
    decision: z.record(z.string(), z.unknown()).describe("The hook's decision schema."),
    registryRevision: z.int().min(0),
    recordSeq: z.int().min(1).describe("Sequence of the decision's record in the log stream."),
  })
  .meta({ id: "CallReply" });

/**
 * The call's fact set (docs/facts.md), with shell facts typed in each tool's `shell` slot: what
 * the coordinator computed once and handed to Cedar, to every worker and to the record.
 */
export const ActionFactsWire = actionFactsSchema(ShellFactsSchema);

/** Coordinator → one worker of a policy, on `<ns>.policy.<policy>.<hook>`. */
export const PolicyRequest = z
  .strictObject({
    timeoutMs: TimeoutMs,
    callId: z.string(),
    hook: ModifyingHookNameSchema,
    policy: z
      .string()
      .optional()
      .describe(
        "The policy asked; the coordinator omits it so that one body (and one blob) serves every policy of a call. The subject names the policy.",
      ),
    context: z.record(z.string(), z.unknown()),
    event: z.record(z.string(), z.unknown()),
    facts: ActionFactsWire.optional().describe(
      "What the call does, computed once by the coordinator from the event (schemas/facts/action-facts.schema.json, docs/facts.md). Sent only to a policy whose registry entry declares `facts: true` (docs/protocol.md). Added in protocol 1 without a version change: a worker that does not know it ignores it.",
    ),
  })
  .meta({ id: "PolicyRequest" });

/** Worker → coordinator. An error reply sets the `Hookbus-Error-Code` header and carries `error`. */
export const PolicyReply = z
  .strictObject({
    policy: z.string(),
    version: z.string().optional(),
    verdict: z
      .unknown()
      .optional()
      .describe("The hook's verdict schema; absent or null is no opinion."),
    error: WireError.optional(),
  })
  .meta({ id: "PolicyReply" });

/** Agent → coordinator, on `<ns>.observe.<agent>.<hook>`: an observational hook's event. */
export const ObserveRequest = z
  .strictObject({
    eventId: z
      .string()
      .min(1)
      .max(256)
      .describe("Unique per event; a retry reuses it (the log stores it once)."),
    hook: HookNameSchema.describe("An observational hook."),
    context: z.record(z.string(), z.unknown()),
    event: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "ObserveRequest" });

/** Coordinator → agent: the observation is stored (or was already, for a retry). */
export const ObserveReply = z
  .strictObject({
    eventId: z.string(),
    recordSeq: z.int().min(1).describe("Sequence of the observation's record in the log stream."),
    duplicate: z
      .boolean()
      .describe("The log already held this event (a retry): nothing new was stored."),
  })
  .meta({ id: "ObserveReply" });

export type ObserveRequest = z.infer<typeof ObserveRequest>;
export type ObserveReply = z.infer<typeof ObserveReply>;
export type CallRequest = z.infer<typeof CallRequest>;
export type CallReply = z.infer<typeof CallReply>;
export type PolicyRequest = z.infer<typeof PolicyRequest>;
export type PolicyReply = z.infer<typeof PolicyReply>;
export type WireError = z.infer<typeof WireError>;
export type ActionFactsWire = z.infer<typeof ActionFactsWire>;

export { HookNameSchema, ModifyingHookNameSchema };
