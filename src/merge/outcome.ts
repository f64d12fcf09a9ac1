/** The merge engine's input: what happened when one policy was asked about one call. */
import { z } from "zod";

export const PolicyStatus = z.enum(["ok", "error", "timeout", "invalid", "unavailable"]).meta({
  id: "PolicyStatus",
  description:
    "ok: the policy answered (with a verdict or none). error: its handler failed. timeout: no answer before its deadline. invalid: its verdict failed validation. unavailable: no live worker.",
});

export const PolicyMode = z.enum(["enforce", "shadow"]).meta({
  id: "PolicyMode",
  description: "shadow: asked and recorded, never part of the enforced decision.",
});

export const FailMode = z.enum(["fail-open", "fail-closed"]).meta({
  id: "FailMode",
  description:
    "What a failed policy does: fail-closed blocks, naming the policy; fail-open is ignored.",
});

export const OutcomeError = z.looseObject({
  code: z.string(),
  message: z.string(),
});

export const PolicyOutcome = z
  .strictObject({
    policy: z.string().min(1),
    version: z.string().optional(),
    priority: z.number().finite().describe("Higher runs first; ties are ordered by policy name."),
    mode: PolicyMode.default("enforce"),
    failMode: FailMode.optional().describe("Absent: the hook's default failure mode."),
    status: PolicyStatus,
    verdict: z
      .unknown()
      .optional()
      .describe("What the policy returned (status ok); undefined or null is no opinion."),
    error: OutcomeError.optional(),
    latencyMs: z.number().min(0).optional(),
  })
  .meta({ id: "PolicyOutcome" });

export type PolicyStatus = z.infer<typeof PolicyStatus>;
export type PolicyMode = z.infer<typeof PolicyMode>;
/** An outcome as callers hand it in (`mode` may be omitted). */
export type PolicyOutcomeInput = z.input<typeof PolicyOutcome>;
export type PolicyOutcome = z.output<typeof PolicyOutcome>;
