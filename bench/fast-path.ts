/**
 * The fast-path micro-benchmark (`npm run bench` prints it as `fastpath_us`): the cost, per call,
 * of a before_tool_call that the client answers locally, including validation of a small context
 * and event and the after_llm_call gate lookup. Without a client it measures an offline client
 * whose registry is empty (the same code path, no server needed); with a client, that client,
 * which must have no policy on the hook.
 */
import { performance } from "node:perf_hooks";
import type { HookContext, HookEvent } from "../src/catalog/catalog.js";
import { HookbusError } from "../src/foundation/errors.js";
import { RegistrySnapshot } from "../src/registry/snapshot.js";
import { HookbusClient } from "../src/agent/client.js";
import { staticRegistryView } from "../src/agent/registry-view.js";

export interface FastPathBenchOptions {
  /** Timed calls (default 100 000). */
  iterations?: number;
  /** Untimed calls first, so the JIT has settled (default 20 000). */
  warmup?: number;
  /** Measure this client; its registry must have no policy for before_tool_call. */
  client?: HookbusClient;
}

export interface FastPathBenchResult {
  iterations: number;
  /** Mean wall time per awaited call, in microseconds. */
  usPerCall: number;
}

const context: HookContext<"before_tool_call"> = {
  agentId: "bench-agent",
  sessionKey: "bench-session",
  runId: "bench-run",
  toolName: "read_file",
  toolCallId: "call_1",
};

const event: HookEvent<"before_tool_call"> = {
  toolName: "read_file",
  toolCallId: "call_1",
  params: { path: "/srv/data/report.csv", limit: 100 },
};

export async function measureFastPath(
  options: FastPathBenchOptions = {},
): Promise<FastPathBenchResult> {
  const iterations = options.iterations ?? 100_000;
  const warmup = options.warmup ?? 20_000;
  const client = options.client ?? offlineClient();
  if (!client.isFastPath("before_tool_call")) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      "measureFastPath: the client's registry has a policy on before_tool_call, so its calls are round trips",
      { argument: "client", hook: "before_tool_call" },
    );
  }
  for (let i = 0; i < warmup; i++) await client.beforeToolCall(context, event);
  const started = performance.now();
  for (let i = 0; i < iterations; i++) await client.beforeToolCall(context, event);
  const elapsedMs = performance.now() - started;
  if (options.client === undefined) await client.close();
  return { iterations, usPerCall: (elapsedMs * 1000) / iterations };
}

function offlineClient(): HookbusClient {
  return HookbusClient.create({
    registry: staticRegistryView(RegistrySnapshot.empty()),
    transport: {
      call: (hook) =>
        Promise.reject(
          new HookbusError("HOOKBUS_INTERNAL", `fast-path benchmark: ${hook} made a round trip`, {
            hook,
          }),
        ),
    },
  });
}
