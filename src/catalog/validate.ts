/** Validation that names the hook, the field path and the rule, with a stable code. */
import type { z } from "zod";
import { hookSchemaName, hookValidator, type HookSchemaKind } from "./compiled-validators.js";
import { HookbusError, type ErrorCode, type ValidationIssue } from "../foundation/errors.js";
import {
  isHookName,
  isModifyingHook,
  type Decision,
  type HookContext,
  type HookEvent,
  type HookName,
  type ModifyingHookName,
  type Verdict,
} from "./catalog.js";

export function toValidationIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    rule: issue.code,
    message: issue.message,
  }));
}

function describeIssues(issues: ValidationIssue[]): string {
  const shown = issues
    .slice(0, 5)
    .map((i) => `${i.path === "" ? "(root)" : i.path}: ${i.message} (${i.rule})`)
    .join("; ");
  return issues.length > 5 ? `${shown}; and ${issues.length - 5} more` : shown;
}

/** Validated by the compiled validator of `schemas/` (zod's errors when it fails; validators.ts). */
function parseOrThrow(
  kind: HookSchemaKind,
  value: unknown,
  code: ErrorCode,
  hook: HookName,
  what: string,
  policy?: string,
): unknown {
  const result = hookValidator(hookSchemaName(hook, kind)).safeParse(value);
  if (result.success) return result.data;
  const issues = toValidationIssues(result.error);
  const who = policy === undefined ? "" : ` from policy "${policy}"`;
  throw new HookbusError(code, `${hook} ${what}${who} is invalid: ${describeIssues(issues)}`, {
    hook,
    ...(policy === undefined ? {} : { policy }),
    issues,
  });
}

export function assertHookName(name: unknown): HookName {
  if (isHookName(name)) return name;
  throw new HookbusError("HOOKBUS_UNKNOWN_HOOK", `unknown hook ${JSON.stringify(name)}`, {
    hook: String(name),
  });
}

export function assertModifyingHook(name: unknown): ModifyingHookName {
  const hook = assertHookName(name);
  if (isModifyingHook(hook)) return hook;
  throw new HookbusError(
    "HOOKBUS_NOT_MODIFYING_HOOK",
    `${hook} is an observational hook: it has no verdicts or decisions`,
    { hook },
  );
}

export function parseEvent<H extends HookName>(hook: H, value: unknown): HookEvent<H> {
  return parseOrThrow(
    "event",
    value,
    "HOOKBUS_INVALID_EVENT",
    assertHookName(hook),
    "event",
  ) as HookEvent<H>;
}

export function parseContext<H extends HookName>(hook: H, value: unknown): HookContext<H> {
  return parseOrThrow(
    "context",
    value,
    "HOOKBUS_INVALID_CONTEXT",
    assertHookName(hook),
    "context",
  ) as HookContext<H>;
}

export function parseVerdict<H extends ModifyingHookName>(
  hook: H,
  value: unknown,
  policy?: string,
): Verdict<H> {
  return parseOrThrow(
    "verdict",
    value,
    "HOOKBUS_INVALID_VERDICT",
    assertModifyingHook(hook),
    "verdict",
    policy,
  ) as Verdict<H>;
}

export function parseDecision<H extends ModifyingHookName>(hook: H, value: unknown): Decision<H> {
  return parseOrThrow(
    "decision",
    value,
    "HOOKBUS_INVALID_DECISION",
    assertModifyingHook(hook),
    "decision",
  ) as Decision<H>;
}
