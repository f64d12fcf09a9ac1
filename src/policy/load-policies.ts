/**
 * Loading policy modules by path, for `hookbus worker` and `hookbus replay`: every export made
 * by definePolicy is a policy (a module may export several, or an array of them).
 */
import { access } from "node:fs/promises";
import { resolve } from "node:path";
import { HookbusError } from "../foundation/errors.js";
import { importModule } from "./import-module.js";
import { isPolicy, type Policy } from "./policy.js";

export interface LoadedPolicy {
  policy: Policy;
  /** The file it came from. */
  path: string;
}

export async function loadPolicyModule(path: string): Promise<LoadedPolicy[]> {
  const absolute = resolve(path);
  try {
    await access(absolute);
  } catch {
    throw new HookbusError("HOOKBUS_INVALID_POLICY", `no policy module at ${absolute}`, {
      path: absolute,
    });
  }
  let module: Record<string, unknown>;
  try {
    module = await importModule(absolute);
  } catch (error) {
    if (error instanceof HookbusError) throw error; // e.g. definePolicy rejected the definition
    // The same, thrown by the copy of hookbus a TypeScript module was loaded with (tsx's own graph).
    const coded = error as Partial<HookbusError> | undefined;
    if (error instanceof Error && coded?.code?.startsWith("HOOKBUS_") === true)
      throw new HookbusError(coded.code, error.message, coded.details ?? {}, error);
    throw new HookbusError(
      "HOOKBUS_INVALID_POLICY",
      `cannot load ${absolute}: ${String((error as Error)?.message ?? error)}`,
      { path: absolute },
      error,
    );
  }
  const found: Policy[] = [];
  for (const value of Object.values(module)) {
    if (isPolicy(value)) found.push(value);
    else if (Array.isArray(value)) found.push(...value.filter(isPolicy));
  }
  const unique = [...new Map(found.map((p) => [p.name, p])).values()];
  if (unique.length === 0) {
    throw new HookbusError(
      "HOOKBUS_INVALID_POLICY",
      `${absolute} exports no policy (export the result of definePolicy, default or named)`,
      { path: absolute },
    );
  }
  return unique.map((policy) => ({ policy, path: absolute }));
}

/** Load several modules; two different modules defining one policy name is an error. */
export async function loadPolicyModules(paths: readonly string[]): Promise<LoadedPolicy[]> {
  const byName = new Map<string, LoadedPolicy>();
  for (const path of paths) {
    for (const loaded of await loadPolicyModule(path)) {
      const earlier = byName.get(loaded.policy.name);
      if (earlier !== undefined && earlier.policy !== loaded.policy) {
        throw new HookbusError(
          "HOOKBUS_INVALID_POLICY",
          `policy "${loaded.policy.name}" is defined in both ${earlier.path} and ${loaded.path}`,
          { policy: loaded.policy.name },
        );
      }
      byName.set(loaded.policy.name, loaded);
    }
  }
  return [...byName.values()];
}
