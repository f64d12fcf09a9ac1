/** The SDK's option and result types, apart from the client so the client file stays readable. */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type {
  Decision,
  HookContext,
  HookEvent,
  ModifyingHookName,
  ObservationalHookName,
} from "../catalog/catalog.js";
import type { ObserveResult } from "./observer.js";
import type { RegistryView, RegistryWatchHealth } from "./registry-view.js";
import type { CallTransport } from "./transport.js";
import type { ApprovalProgressCallback, ApprovalWaiter } from "./approval-wait.js";

export interface HookbusClientOptions {
  /** The caller's connection; `close()` leaves it open. */
  nc: NatsConnection;
  /** Must match the coordinators' namespace (default `hookbus`). */
  namespace?: string;
  /** Per-call deadline in ms (default 5000): covers the gate wait, retries and the round trip. */
  timeoutMs?: number;
  /** Library code logs nothing unless given a logger. */
  logger?: Logger;
  /**
   * Answer calls locally when the registry has no policy for the hook (default true). With
   * `false` every call goes to a coordinator (the registry is still watched, for the redaction
   * rules of observations).
   */
  fastPath?: boolean;
  /**
   * Run unchecked in a namespace where no registry was ever applied (default false: every call
   * rejects with HOOKBUS_NO_REGISTRY there, so an agent pointed at the wrong server or namespace
   * fails closed instead of being allowed everything, unrecorded). For development only.
   */
  allowMissingRegistry?: boolean;
  /**
   * How long the registry watch may be down (it is restarted with backoff) before calls stop
   * trusting the fast path and go to a coordinator (default 5000 ms).
   */
  registryStaleAfterMs?: number;
  /**
   * @deprecated Ignored: observations are redacted by the coordinators, with their key. Kept so
   * that existing callers still compile.
   */
  redactionKey?: string;
  /**
   * Told when a before_tool_call waiting for a person changes (first seen, a group approved, a
   * new deadline): once per state, not at every poll (docs/approvals.md).
   */
  onApproval?: ApprovalProgressCallback;
}

export interface CallOptions {
  /** This call's deadline, overriding the client's. */
  timeoutMs?: number;
  /** Reuse an id when retrying a call yourself: the log stores one call per id. Default: a UUID. */
  callId?: string;
  /** Told when this call's pending approval changes; overrides the client's. */
  onApproval?: ApprovalProgressCallback;
  /**
   * Wait for a pending approval to be settled (default true). With `false` a `pending_approval`
   * decision is returned as it is (`approval.id`, `requireApproval`): a framework's own approval
   * flow shows it and answers it (`answerApproval`), then `waitForApproval()` gives the decision.
   */
  waitForApproval?: boolean;
}

export interface ObserveCallOptions {
  timeoutMs?: number;
  /** The JetStream message id: observing the same eventId twice stores it once. Default: a UUID. */
  eventId?: string;
}

/** Who produced a decision. */
export type DecisionSource = "coordinator" | "fast-path" | "after_llm_call_gate";

export interface CallResult<H extends ModifyingHookName> {
  decision: Decision<H>;
  source: DecisionSource;
  /** The id the call was sent with; undefined when nothing was sent and none was given. */
  callId: string | undefined;
  /** The registry revision the decision was made with, when known. */
  registryRevision: number | undefined;
  /** Sequence of the decision's record in the log stream (coordinator decisions only). */
  recordSeq: number | undefined;
}

/** Where observations go; the NATS implementation publishes to the log stream. */
export interface ObservationSink {
  publish<H extends ObservationalHookName>(
    hook: H,
    context: HookContext<H>,
    event: HookEvent<H>,
    eventId: string,
    deadline: number,
  ): Promise<ObserveResult>;
}

/** The parts of a client, for `HookbusClient.create` (in-process transports, tests, benchmarks). */
export interface HookbusClientParts {
  transport: CallTransport;
  observer?: ObservationSink;
  /** Default: no fast path (every call goes to the transport). */
  registry?: RegistryView;
  timeoutMs?: number;
  logger?: Logger;
  /** See HookbusClientOptions.allowMissingRegistry. */
  allowMissingRegistry?: boolean;
  /** Waits out pending approvals; without it a pending_approval decision fails closed. */
  approvals?: ApprovalWaiter;
  onApproval?: ApprovalProgressCallback;
  /** The namespace the parts talk to, when they talk to one (adapters answer approvals there). */
  namespace?: string;
}

/** Counters of where decisions came from, since the client started (for metrics). */
export interface HookbusClientStats {
  /** Calls answered locally with `allow` (no policy for the hook): not recorded in the log. */
  fastPath: number;
  /** Calls sent to a coordinator (whatever the outcome). */
  coordinator: number;
  /** before_tool_call calls blocked by the run's after_llm_call gate without a round trip. */
  gate: number;
  /** Calls refused with HOOKBUS_NO_REGISTRY. */
  noRegistry: number;
  /** The registry watch: running, restarts so far, and for how long it has been down. */
  registryWatch: RegistryWatchHealth;
}
