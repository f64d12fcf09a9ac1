/**
 * What the worker integration tests share: a namespace per test (so tests on one server never
 * see each other's subjects, streams or buckets), connections, and a client that speaks the
 * coordinator's side of the policy protocol (docs/protocol.md) straight on NATS.
 */
import type { MsgHdrs, NatsConnection } from "@nats-io/transport-node";
import { Bus } from "../../../src/bus/bus.js";
import { bodyHeaders, optionalBodyHeaders } from "../../../src/bus/codec.js";
import { PolicyReply } from "../../../src/bus/envelope.js";
import { Header } from "../../../src/bus/headers.js";
import { ensureLogStreams } from "../../../src/bus/streams.js";
import { uniqueNamespace as namespaceWith } from "../../support/nats.js";

export { connectTo, useNatsServer } from "../../support/nats.js";
export { gate, until } from "../../support/wait.js";

export const uniqueNamespace = (prefix = "w") => namespaceWith(prefix);

export const toolContext = (sessionKey = "sess-1") => ({
  agentId: "agent-1",
  sessionKey,
  runId: "run-1",
  toolCallId: "tc-1",
});

export const toolEvent = (toolName = "shell", params: Record<string, unknown> = { cmd: "ls" }) => ({
  toolName,
  toolCallId: "tc-1",
  params,
});

export interface AskResult {
  reply: PolicyReply;
  headers: MsgHdrs | undefined;
  /** The `Hookbus-Error-Code` header, or undefined. */
  errorCode: string | undefined;
  /** The `Hookbus-Encoding` header of the reply, or undefined (plain JSON). */
  encoding: string | undefined;
}

/** The coordinator's side: send one PolicyRequest body (any value) and decode the reply. */
export class PolicyAskClient {
  private counter = 0;

  private constructor(readonly bus: Bus) {}

  static async open(nc: NatsConnection, namespace: string): Promise<PolicyAskClient> {
    const bus = await Bus.open(nc, { namespace });
    // The blob stream carries bodies too large for one message (requests and replies).
    await ensureLogStreams(bus.jsm, bus.subjects);
    return new PolicyAskClient(bus);
  }

  request(
    policy: string,
    hook: string,
    body: { event?: unknown; context?: unknown; callId?: string; hook?: string; policy?: string },
    timeoutMs = 5000,
  ): Promise<AskResult> {
    const callId = body.callId ?? `call-${++this.counter}`;
    return this.raw(
      policy,
      hook,
      {
        callId,
        hook: body.hook ?? hook,
        policy: body.policy ?? policy,
        context: body.context,
        event: body.event,
      },
      { [Header.CallId]: callId, [Header.TimeoutMs]: String(timeoutMs) },
      timeoutMs,
    );
  }

  async raw(
    policy: string,
    hook: string,
    body: unknown,
    headers: Record<string, string> = {},
    timeoutMs = 5000,
  ): Promise<AskResult> {
    const encoded = await this.bus.codec.encode(body);
    const msg = await this.bus.nc.request(
      `${this.bus.subjects.namespace}.policy.${policy}.${hook}`,
      encoded.data,
      {
        timeout: timeoutMs,
        // No header block at all when there is nothing to say (a protocol 2 coordinator's ask).
        headers: optionalBodyHeaders(encoded, headers),
      },
    );
    const reply = PolicyReply.parse(await this.bus.codec.decodeMessage(msg));
    const errorCode = msg.headers?.get(Header.ErrorCode) || undefined;
    const encoding = msg.headers?.get(Header.Encoding) || undefined;
    return { reply, headers: msg.headers, errorCode, encoding };
  }

  /** Send raw bytes with the given headers (for undecodable bodies). */
  async bytes(
    policy: string,
    hook: string,
    data: Uint8Array,
    headers: Record<string, string> = {},
  ): Promise<AskResult> {
    const h = bodyHeaders({ data, encoding: "json" }, headers);
    const msg = await this.bus.nc.request(
      `${this.bus.subjects.namespace}.policy.${policy}.${hook}`,
      data,
      { timeout: 5000, headers: h },
    );
    const reply = PolicyReply.parse(await this.bus.codec.decodeMessage(msg));
    return {
      reply,
      headers: msg.headers,
      errorCode: msg.headers?.get(Header.ErrorCode) || undefined,
      encoding: msg.headers?.get(Header.Encoding) || undefined,
    };
  }
}
