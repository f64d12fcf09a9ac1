/**
 * The supported Node.js: 24 LTS or newer. Node 20 reached its end of life in April 2026 and
 * crashes in V8 (a fatal `Deoptimizer` SIGTRAP) right after loading a Cedar set; Node 22 is not
 * tested by CI, so it is not claimed. `bin/hookbus.js` repeats this check in plain JavaScript
 * (it runs before anything is imported); a unit test keeps the two in step.
 */
import { HookbusError } from "./errors.js";

export const SUPPORTED_NODE_MAJOR = 24;

/** How to get a supported Node: the same words everywhere a refusal is printed. */
export const SUPPORTED_NODE_FIX =
  "run it on Node 24 LTS or newer: in a hookbus checkout, `bash scripts/setup.sh` puts Node 24 in .tools/bin " +
  '(then run commands with PATH="$PWD/.tools/bin:$PATH"); elsewhere install Node 24 LTS';

/** The refusal for a Node version older than the supported one, or undefined when it is supported. */
export function unsupportedNode(version: string = process.versions.node): HookbusError | undefined {
  const major = Number.parseInt(version.split(".")[0] ?? "", 10);
  if (Number.isInteger(major) && major >= SUPPORTED_NODE_MAJOR) return undefined;
  return new HookbusError(
    "HOOKBUS_UNSUPPORTED_NODE",
    `hookbus needs Node ${SUPPORTED_NODE_MAJOR} or newer, this is Node ${version}: ${SUPPORTED_NODE_FIX}`,
    { version, supported: `>=${SUPPORTED_NODE_MAJOR}` },
  );
}

/** Throws HOOKBUS_UNSUPPORTED_NODE on an unsupported Node; for entry points (CLI, services, demo). */
export function assertSupportedNode(version?: string): void {
  const refusal = unsupportedNode(version);
  if (refusal !== undefined) throw refusal;
}
