/**
 * The Cedar side of `npm run bench:cedar` (and of `BENCH_PROFILE_CEDAR=1 npm run bench:profile`):
 * a coordinator whose registry is one Cedar entry on before_tool_call and NO worker, and an agent
 * client off its fast path. `fresh`: every call's params differ (its `limit`), so no answer is
 * remembered and the engine, or the TypeScript matcher, decides each one, as real calls do.
 */
import type { HookbusClient } from "../../src/agent/index.js";
import { startCoordinator } from "../../src/coordinator/index.js";
import {
  applyThenConnect,
  BENCH_EVENT,
  laneCall,
  laneContext,
  type DecisionPath,
  type RoleConnections,
} from "./decision-path.js";

/** 100 rules of the usual shapes: tool names, classes with a parameter pattern, paths, hosts. */
export function hundredRules(): string {
  const rules: string[] = [];
  for (let i = 0; i < 100; i++) {
    const shape = i % 4;
    if (shape === 0)
      rules.push(
        `forbid (principal, action == Action::"before_tool_call", resource == Tool::"tool_${i}");`,
      );
    else if (shape === 1)
      rules.push(
        `forbid (principal, action == Action::"before_tool_call", resource is Tool) when { resource.class == "shell" && context.call.paramsText like "*pattern-${i}*" };`,
      );
    else if (shape === 2)
      rules.push(
        `forbid (principal, action == Action::"before_tool_call", resource) when { context.call.paths.contains("/secret/${i}") };`,
      );
    else
      rules.push(
        `forbid (principal, action == Action::"before_tool_call", resource) when { context.call has url && context.call.url.host == "blocked-${i}.example" };`,
      );
  }
  return rules.join("\n");
}

export interface CedarPath extends DecisionPath {
  /** One call of lane `lane` (its own session). */
  call: (lane: number) => Promise<unknown>;
}

/** Resolves once the coordinator has the registry and the client is off its fast path. */
export async function startCedarPath(
  roles: RoleConnections,
  namespace: string,
  cedar: string,
  options: { fresh: boolean; lanes: number },
): Promise<CedarPath> {
  const coordinator = await startCoordinator({ nc: roles.coordinator, namespace });
  const client = await applyThenConnect(roles, namespace, coordinator, {
    policies: [{ name: "rules", kind: "cedar", cedar, hooks: ["before_tool_call"], priority: 10 }],
  });
  return {
    client,
    coordinator,
    call: options.fresh ? freshCall(client, options.lanes) : laneCall(client, options.lanes),
    async stop() {
      await client.close();
      await coordinator.stop();
    },
  };
}

/** The benchmark call with params no call before had, so no answer is remembered. */
function freshCall(client: HookbusClient, lanes: number): (lane: number) => Promise<unknown> {
  const contexts = Array.from({ length: lanes }, (_, lane) => laneContext(lane));
  let n = 0;
  return (lane) =>
    client.beforeToolCall(contexts[lane]!, {
      ...BENCH_EVENT,
      params: { ...BENCH_EVENT.params, limit: n++ },
    });
}
