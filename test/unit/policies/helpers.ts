/** Calling an example policy in process, as a worker would (validation included). */
import { expect } from "vitest";
import {
  invokePolicy,
  MemorySessionStateStore,
  type HookEvent,
  type ModifyingHookName,
  type ObservationalHookName,
  type Policy,
  type SessionStateStore,
  type Verdict,
} from "../../../src/index.js";

let calls = 0;

export function context(sessionKey = "s-1", extra: Record<string, unknown> = {}) {
  return { agentId: "agent-1", sessionKey, runId: "run-1", ...extra };
}

/** The policy's verdict (undefined: no opinion); fails the test when the policy errored. */
export async function verdictOf<H extends ModifyingHookName>(
  policy: Policy,
  hook: H,
  event: HookEvent<H>,
  options: { state?: SessionStateStore; sessionKey?: string; callId?: string } = {},
): Promise<Verdict<H> | undefined> {
  const result = await invokePolicy(policy, hook, event, context(options.sessionKey), {
    callId: options.callId ?? `call-${++calls}`,
    state: options.state ?? new MemorySessionStateStore(),
  });
  expect(result.error, JSON.stringify(result.error)).toBeUndefined();
  expect(result.status).toBe("ok");
  return result.verdict;
}

/** Deliver an observation as the runner does; fails when the handler failed. */
export async function observe<H extends ObservationalHookName>(
  policy: Policy,
  hook: H,
  event: HookEvent<H>,
  options: { state: SessionStateStore; sessionKey?: string },
): Promise<void> {
  const result = await invokePolicy(policy, hook, event, context(options.sessionKey), {
    callId: `obs-${++calls}`,
    state: options.state,
  });
  expect(result.error, JSON.stringify(result.error)).toBeUndefined();
  expect(result.status).toBe("ok");
}
