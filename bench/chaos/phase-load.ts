/**
 * Load for a phase of the chaos run that lasts as long as its fault does (a rolling restart), not
 * a fixed number of calls: `concurrency` sessions call in a loop until `stop()`. Each call is
 * kept with its answer, so the run's checks (lost, duplicates, wrong) cover these calls too, and
 * a call failed means: an error, or an answer other than the policy's own (`rm` blocked, the rest
 * allowed — a fail-closed block of `ls` is a policy that could not be asked).
 */
import { isHookbusError, type HookbusClient } from "../../src/index.js";
import type { CallWatchdog } from "./watchdog.js";

export interface PhaseCall {
  callId: string;
  cmd: "ls" | "rm";
  sentAt: number;
  at: number;
  /** The decision, when answered. */
  decision?: { outcome: string };
  /** The error code, when it failed. */
  error?: string;
}

export function failedCall(call: PhaseCall): boolean {
  if (call.decision === undefined) return true;
  return call.decision.outcome !== (call.cmd === "rm" ? "block" : "allow");
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function startPhaseLoad(
  client: HookbusClient,
  options: { concurrency: number; prefix: string; maxCalls?: number; watchdog?: CallWatchdog },
): { calls: PhaseCall[]; stop: () => Promise<PhaseCall[]> } {
  const calls: PhaseCall[] = [];
  const maxCalls = options.maxCalls ?? 1_000_000;
  let stopping = false;
  let n = 0;
  const loop = async (session: number) => {
    while (!stopping && calls.length < maxCalls) {
      const i = n++;
      const callId = `${options.prefix}-${i}`;
      const cmd = i % 7 === 0 ? "rm" : "ls";
      const call: PhaseCall = { callId, cmd, sentAt: Date.now(), at: 0 };
      try {
        const send = () =>
          client.call(
            "before_tool_call",
            {
              agentId: "chaos-agent",
              sessionKey: `${options.prefix}-s${session}`,
              runId: "run-1",
              toolCallId: callId,
            },
            { toolName: "shell", toolCallId: callId, params: { cmd } },
            { callId },
          );
        const result = await (options.watchdog?.watch(callId, send) ?? send());
        call.decision = result.decision;
      } catch (error) {
        call.error = isHookbusError(error) ? error.code : "UNCODED";
      }
      call.at = Date.now();
      calls.push(call);
    }
  };
  const loops = Array.from({ length: options.concurrency }, (_, s) => loop(s));
  return {
    calls,
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
      return calls;
    },
  };
}
