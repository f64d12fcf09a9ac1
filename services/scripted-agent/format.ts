import type { SessionStep } from "./session.js";

/** One line per step: hook, outcome, latency, who decided (or why it was blocked). */
export function formatStep(step: SessionStep): string {
  const latency = `${step.latencyMs.toFixed(1)} ms`.padStart(9);
  return `${step.hook.padEnd(22)} ${step.outcome.padEnd(8)} ${latency}  ${step.detail}`;
}
