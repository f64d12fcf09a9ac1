/**
 * Every subject hookbus uses, in one place. A namespace prefix (default `hookbus`) lets several
 * deployments, or a replay against workers deployed apart, share one NATS account.
 *
 *   <ns>.call.<agent>.<hook>                          agent → coordinators (queue group)
 *   <ns>.policy.<policy>.<hook>                       coordinator → one worker of a policy (queue group)
 *   <ns>.audit.<agent>.<session>.<hook>.<outcome>     the log stream
 *   <ns>.observe.<agent>.<hook>                       agent → coordinators: observations (queue group)
 *   <ns>.blob.<agent>.<sha256>.<index>                chunks of bodies too large for one message
 *   <ns>.approvals.answer.<approver>.<group>          approver → coordinators: approve/deny (queue group)
 *   <ns>.approvals.status.<agent>                     agent → coordinators: a pending approval's state
 */
import type { HookName } from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import { decodeToken, encodeToken } from "./tokens.js";

export const DEFAULT_NAMESPACE = "hookbus";
export const NAMESPACE_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** The outcome token of a log record: a decision's outcome, or what kind of record it is. */
export type RecordKind =
  | "allow"
  | "modify"
  | "block"
  | "reply"
  | "pending_approval"
  | "approval"
  | "error"
  | "late"
  | "observed"
  | "erasure";

export interface AuditSubjectFilter {
  agentId?: string;
  sessionKey?: string;
  hook?: HookName;
  kind?: RecordKind;
}

export interface ParsedAuditSubject {
  agentId: string;
  sessionKey: string;
  hook: string;
  kind: RecordKind;
}

export class Subjects {
  constructor(readonly namespace: string = DEFAULT_NAMESPACE) {
    // One token of lowercase letters, digits and '-': stream names are the namespace in capitals
    // (so capitals or '_' would let two namespaces share a stream), and a dotted namespace could
    // be a prefix of another's subjects (`x` and `x.audit`), which JetStream refuses to overlap.
    if (!NAMESPACE_PATTERN.test(namespace)) {
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `invalid namespace ${JSON.stringify(namespace)}: use 1-64 lowercase letters, digits and '-'`,
        { argument: "namespace" },
      );
    }
  }

  call(agentId: string, hook: HookName): string {
    return `${this.namespace}.call.${encodeToken(agentId)}.${hook}`;
  }

  get callWildcard(): string {
    return `${this.namespace}.call.*.*`;
  }

  observe(agentId: string, hook: HookName): string {
    return `${this.namespace}.observe.${encodeToken(agentId)}.${hook}`;
  }

  get observeWildcard(): string {
    return `${this.namespace}.observe.*.*`;
  }

  policy(policy: string, hook: HookName): string {
    return `${this.namespace}.policy.${policy}.${hook}`;
  }

  policyWildcard(policy: string): string {
    return `${this.namespace}.policy.${policy}.*`;
  }

  /** The queue group of one policy's workers: N processes of a policy share its calls. */
  policyQueue(policy: string): string {
    return `${this.namespace}-policy-${policy}`;
  }

  get coordinatorQueue(): string {
    return `${this.namespace}-coordinators`;
  }

  /** `hook` is "unknown" only for error records of calls whose hook name was not valid. */
  audit(agentId: string, sessionKey: string, hook: HookName | "unknown", kind: RecordKind): string {
    return `${this.namespace}.audit.${encodeToken(agentId)}.${encodeToken(sessionKey)}.${hook}.${kind}`;
  }

  get auditAll(): string {
    return `${this.namespace}.audit.>`;
  }

  /** A single-subject filter for what the server can filter by itself (missing parts are `*`). */
  auditFilter(filter: AuditSubjectFilter = {}): string {
    const agent = filter.agentId === undefined ? "*" : encodeToken(filter.agentId);
    const session = filter.sessionKey === undefined ? "*" : encodeToken(filter.sessionKey);
    return `${this.namespace}.audit.${agent}.${session}.${filter.hook ?? "*"}.${filter.kind ?? "*"}`;
  }

  parseAudit(subject: string): ParsedAuditSubject {
    const prefix = `${this.namespace}.audit.`;
    const parts = subject.startsWith(prefix) ? subject.slice(prefix.length).split(".") : [];
    if (parts.length !== 4) throw new RangeError(`not an audit subject: ${subject}`);
    const [agent, session, hook, kind] = parts as [string, string, string, RecordKind];
    return { agentId: decodeToken(agent), sessionKey: decodeToken(session), hook, kind };
  }

  /** `owner` is already a token: an encoded agent id, or SHARED_BLOB_OWNER. */
  blob(owner: string, id: string): string {
    return `${this.namespace}.blob.${owner}.${id}`;
  }

  get blobAll(): string {
    return `${this.namespace}.blob.>`;
  }

  /** An approver's answer; `group` is one of the request's groups, or `-` (docs/approvals.md). */
  approvalAnswer(approver: string, group: string): string {
    return `${this.namespace}.approvals.answer.${encodeToken(approver)}.${group}`;
  }

  get approvalAnswerWildcard(): string {
    return `${this.namespace}.approvals.answer.*.*`;
  }

  approvalStatus(agentId: string): string {
    return `${this.namespace}.approvals.status.${encodeToken(agentId)}`;
  }

  get approvalStatusWildcard(): string {
    return `${this.namespace}.approvals.status.*`;
  }

  /** A policy's workers ask coordinators for a session's state key here (docs/privacy.md). */
  stateKey(policy: string): string {
    return `${this.namespace}.privacy.statekey.${policy}`;
  }

  get stateKeyWildcard(): string {
    return `${this.namespace}.privacy.statekey.*`;
  }

  /** Approvers ask coordinators for a request's sealed texts here (docs/privacy.md). */
  get approvalShow(): string {
    return `${this.namespace}.approvals.show`;
  }

  /** Pending and settled approval requests (src/approvals/store.ts). */
  get approvalsBucket(): string {
    return `${this.namespace}_approvals`;
  }

  get logStream(): string {
    return `${this.namespace.toUpperCase()}_LOG`;
  }

  get blobStream(): string {
    return `${this.namespace.toUpperCase()}_BLOBS`;
  }

  get registryBucket(): string {
    return `${this.namespace}_registry`;
  }

  get stateBucket(): string {
    return `${this.namespace}_state`;
  }
}
