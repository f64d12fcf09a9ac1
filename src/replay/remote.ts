/**
 * A candidate policy served by live workers: replay asks them through the bus, exactly as a
 * coordinator does (a PolicyRequest on `<ns>.policy.<name>.<hook>` with a deadline), so a policy
 * written in another language (python/, or any worker that passes the conformance kit) is
 * replayed like a loaded module. Its verdict is validated by replay as any handler's is.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { Bus } from "../bus/bus.js";
import { bodyHeaders } from "../bus/codec.js";
import type { PolicyReply } from "../bus/envelope.js";
import { Header } from "../bus/headers.js";
import { MODIFYING_HOOK_NAMES, type ModifyingHookName } from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import { definePolicy, type Policy, type PolicyTools } from "../policy/policy.js";

export interface RemotePolicyOptions {
  nc: NatsConnection;
  /** The namespace the workers serve. Default `hookbus`. */
  namespace?: string;
  name: string;
  /** Modifying hooks to ask it about. Default: every modifying hook. */
  hooks?: readonly ModifyingHookName[];
  /** Each ask's deadline. Default 5 s. */
  timeoutMs?: number;
}

export async function remotePolicy(options: RemotePolicyOptions): Promise<Policy> {
  const bus = await Bus.open(options.nc, {
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
  });
  const timeoutMs = options.timeoutMs ?? 5000;
  const ask = async (
    hook: ModifyingHookName,
    event: unknown,
    context: unknown,
    tools: PolicyTools,
  ) => {
    const body = { callId: tools.callId, hook, policy: options.name, context, event } as Record<
      string,
      unknown
    >;
    // The worker gets the facts replay computed, as it would get the coordinator's live.
    if (tools.facts !== undefined) body.facts = tools.facts;
    const encoded = await bus.codec.encode(body);
    let msg;
    try {
      msg = await bus.nc.request(
        `${bus.subjects.namespace}.policy.${options.name}.${hook}`,
        encoded.data,
        {
          timeout: timeoutMs,
          headers: bodyHeaders(encoded, { [Header.TimeoutMs]: String(timeoutMs) }),
        },
      );
    } catch (error) {
      throw new HookbusError(
        "HOOKBUS_POLICY_UNAVAILABLE",
        `no answer from a worker of "${options.name}" for ${hook}: ${String(error)}`,
        { policy: options.name, hook },
        error,
      );
    }
    const reply = (await bus.codec.decodeMessage(msg)) as PolicyReply;
    if (reply.error !== undefined) {
      throw new HookbusError(
        "HOOKBUS_POLICY_ERROR",
        `${reply.error.code}: ${reply.error.message}`,
        {
          policy: options.name,
          hook,
        },
      );
    }
    return reply.verdict ?? undefined;
  };
  const hooks = Object.fromEntries(
    (options.hooks ?? MODIFYING_HOOK_NAMES).map((hook) => [
      hook,
      (event: unknown, context: unknown, tools: PolicyTools) => ask(hook, event, context, tools),
    ]),
  );
  // The hooks are built at run time, so the per-hook verdict types cannot be checked here.
  return definePolicy({ name: options.name, hooks } as Parameters<typeof definePolicy>[0]);
}
