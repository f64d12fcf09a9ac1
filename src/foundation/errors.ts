/**
 * Every error hookbus raises or sends over the wire carries one of these stable codes.
 * The code is the contract (it travels in the `Hookbus-Error-Code` NATS header and in log
 * records); messages are for people and may change. `docs/errors.md` explains each code to an
 * operator, and a test keeps that page and this table in step.
 */
export const ErrorCodes = {
  HOOKBUS_UNKNOWN_HOOK: "The hook name is not in the catalog.",
  HOOKBUS_INVALID_EVENT: "An event does not match its hook's event schema.",
  HOOKBUS_INVALID_CONTEXT: "A call context does not match its hook's context schema.",
  HOOKBUS_INVALID_VERDICT: "A policy returned a verdict its hook does not allow.",
  HOOKBUS_INVALID_OUTCOME: "A policy outcome handed to the merge engine is malformed.",
  HOOKBUS_DUPLICATE_POLICY: "Two outcomes for one call name the same policy.",
  HOOKBUS_NOT_MODIFYING_HOOK: "A merge or verdict was asked of an observational hook.",
  HOOKBUS_INVALID_DECISION:
    "A merged decision received from a coordinator does not match its hook's decision schema.",
  HOOKBUS_BAD_MESSAGE:
    "A message body could not be decoded (not JSON, a key twice in one object, a number beyond a double, bad gzip, malformed blob reference).",
  HOOKBUS_PAYLOAD_TOO_LARGE: "A body is larger than one message and no blob store is available.",
  HOOKBUS_BLOB_MISSING: "A large body's stored chunks are missing or corrupt.",
  HOOKBUS_BLOB_UNSEALED:
    "A large body's blob reference carries no key (the body was stored in clear) while the namespace encrypts.",
  HOOKBUS_POLICY_ERROR: "A policy's handler threw or rejected.",
  HOOKBUS_POLICY_TIMEOUT: "A policy did not answer before its deadline.",
  HOOKBUS_POLICY_UNAVAILABLE: "A policy in the registry has no live worker.",
  HOOKBUS_BLOCKED: "The merged decision blocked the call.",
  HOOKBUS_CALL_TIMEOUT: "The agent got no decision before its deadline.",
  HOOKBUS_COORDINATOR_UNAVAILABLE: "No coordinator is listening for calls.",
  HOOKBUS_LOG_UNAVAILABLE:
    "A record could not be stored in the log, so the decision was not released.",
  HOOKBUS_LOG_REFUSED:
    "JetStream refused a record (its error code says why); some refusals are for good: too large, a sealed stream.",
  HOOKBUS_INVALID_REGISTRY: "A registry document (policy set) is invalid.",
  HOOKBUS_INVALID_POLICY:
    "A policy definition (definePolicy) is invalid: bad name, unknown hook, or a handler that is not a function.",
  HOOKBUS_STATE_CONFLICT: "A session-state update kept losing compare-and-set races and gave up.",
  HOOKBUS_NATS_NOT_FOUND: "No NATS server could be found or started.",
  HOOKBUS_INVALID_ARGUMENT:
    "An SDK method got an argument it cannot use (a malformed call or event id, a bad timeout, the wrong kind of hook).",
  HOOKBUS_INTERNAL: "An unexpected error inside hookbus; the message says where.",
  HOOKBUS_NATS_UNREACHABLE:
    "The NATS server could not be reached (connection refused, unknown host, timed out).",
  HOOKBUS_NATS_AUTH: "The NATS server refused the connection's credentials.",
  HOOKBUS_USAGE: "A command line names an unknown command or option, or lacks a required one.",
  HOOKBUS_UNSUPPORTED_NODE:
    "The Node.js running hookbus is older than the supported one (Node 24 LTS or newer).",
  HOOKBUS_EMPTY_SELECTION:
    "A gate (replay --fail-on-change, audit verify) selected nothing to check, so it cannot pass.",
  HOOKBUS_FILE_EXISTS:
    "hookbus init would overwrite files that already exist, so it wrote nothing.",
  HOOKBUS_NO_REGISTRY:
    "No registry was ever applied in the agent's namespace, so there is no policy set to enforce.",
  HOOKBUS_INVALID_FIXTURE:
    "A policy test fixture file is not valid JSON/NDJSON or a case is malformed.",
  HOOKBUS_HTTP_UNAVAILABLE: "The --http address (metrics and health endpoints) could not be bound.",
  HOOKBUS_IDENTITY_MISMATCH:
    "A body claims another agent than the agent token of the subject it was sent on.",
  HOOKBUS_CALL_ID_CONFLICT:
    "A call or event id was reused, in the same agent and session, for a different call.",
  HOOKBUS_LIMIT_EXCEEDED:
    "An input is over a configured limit (id length or characters, body size, nesting depth, blob chunks).",
  HOOKBUS_RATE_LIMITED: "An agent sent more calls or observations than its rate limit allows.",
  HOOKBUS_BAD_RECORD: "A log record could not be decoded or does not match the record schema.",
  HOOKBUS_INVALID_AUTH:
    "An auth description (`hookbus auth`) is invalid, or its key files cannot be read or written.",
  HOOKBUS_SEAL_KEY_INVALID: "A sealer key (nkey seed or public key) is missing or malformed.",
  HOOKBUS_SIGN_KEY_INVALID:
    "A coordinator signing key (nkey seed, public key or trusted keys file) is missing or malformed.",
  HOOKBUS_PRIVACY_KEK_INVALID:
    "The key-encryption key of the namespace's data keys is missing, malformed, or does not unwrap them.",
  HOOKBUS_PRIVACY_SUBJECT_INVALID:
    "A data subject id (the context's `subject`, or `hookbus erase --subject`) is empty, too long or holds characters outside letters, digits and ._:@+-.",
  HOOKBUS_PRIVACY_KEY_UNAVAILABLE:
    "A subject's data key could not be read or stored in the keys bucket, so the record was not written.",
  HOOKBUS_STATE_KEY_QUOTA:
    "A policy asked for more new session state keys than its quota allows (per coordinator, per window).",
  HOOKBUS_SESSION_ERASED:
    "The data of the call's session or subject was erased: what depended on it (a pending approval, sealed session state) blocks instead of allowing.",
  HOOKBUS_SEAL_CONFLICT:
    "Another sealer appended to the seal stream (or holds the lease): this sealer stood down.",
  HOOKBUS_CONSUMER_MISMATCH:
    "A durable consumer on the log is not configured as its owner creates it (filter, deliver or ack policy): someone else created or altered it.",
  HOOKBUS_ANCHOR_INVALID: "An anchor file cannot be read, is malformed or its signature is wrong.",
  HOOKBUS_WORKER_OVERLOADED:
    "A policy worker's queue was full, or the request's deadline had passed before a handler was free.",
  HOOKBUS_OVERLOADED: "A coordinator already had its maximum number of calls in flight.",
  HOOKBUS_INBOX_FULL:
    "A process already had its maximum number of requests awaiting replies on one connection.",
  HOOKBUS_INDEX_UNAVAILABLE: "The audit index (PostgreSQL) could not be reached or queried.",
  HOOKBUS_INDEX_SCHEMA: "The audit index's schema is not the one this hookbus version expects.",
  HOOKBUS_INDEX_REJECTED:
    "PostgreSQL refused a log record's data; the indexer stored it as an `invalid` row with the reason.",
  HOOKBUS_LOG_READ_TIMEOUT:
    "A log read got no record within its batch deadline while the server still counted records left to read.",
  HOOKBUS_SCAN_TOO_LARGE:
    "An audit query without the index would scan more log records than allowed.",
  HOOKBUS_PG_NOT_FOUND: "No PostgreSQL server could be found or started (tests and benchmarks).",
  HOOKBUS_MISSING_PEER: "An optional peer dependency that this feature needs is not installed.",
  HOOKBUS_MCP_UPSTREAM: "The upstream MCP server could not be started, reached or initialised.",
  HOOKBUS_NO_RUN: "A framework adapter was called outside a hookbus run.",
  HOOKBUS_APPROVAL_NOT_FOUND: "No approval request has this id (or it expired from the bucket).",
  HOOKBUS_APPROVAL_SETTLED: "The approval request was already settled; an answer counts once.",
  HOOKBUS_APPROVAL_FORBIDDEN:
    "The answer's approver group is not one the request names, or a caller asked about another agent's request.",
  HOOKBUS_APPROVAL_DIGEST_MISMATCH:
    "The answer names a different call digest than the request: it was given for another call.",
  HOOKBUS_APPROVAL_UNRESOLVED:
    "The agent got no settlement of a pending approval before its deadline (no coordinator answered).",
  HOOKBUS_CLIENT_CLOSED:
    "The client was closed while a call waited for a person's approval; the call failed closed.",
  HOOKBUS_CONFORMANCE_FAILED:
    "A policy worker failed cases of the conformance kit (`hookbus conformance worker`).",
  HOOKBUS_INVALID_CEDAR:
    "A Cedar policy set does not parse, repeats a policy id, or does not type-check against the hook schema.",
  HOOKBUS_CEDAR_TOO_DEEP:
    "A Cedar policy nests brackets deeper than the limit (32), which would overflow the engine's stack.",
  HOOKBUS_CEDAR_TOO_MANY_TERMS:
    "A Cedar policy has more operators than the limit (128), which would overflow the engine's stack.",
  HOOKBUS_CEDAR_TOO_MANY_RULES: "A Cedar policy set has more policies than the limit (1,000).",
  HOOKBUS_CEDAR_TOO_LARGE: "A Cedar policy set's text is larger than the limit (256 KiB).",
  HOOKBUS_CEDAR_ENGINE_TRAP:
    "The Cedar engine trapped (stack overflow, out-of-bounds memory) on a policy set; the instance was replaced and the set answers this error.",
  HOOKBUS_CEDAR_LOAD_TIMEOUT:
    "Parsing and checking a Cedar policy set took longer than its time budget, so it was not loaded.",
  HOOKBUS_DAEMON_UNAVAILABLE:
    "The Claude Code hook daemon could not be started or reached, or closed a request without answering.",
  HOOKBUS_DAEMON_SOCKET_UNSAFE:
    "The hook daemon's socket folder or socket is owned by another user, open to others, or not a socket, so it is not used.",
  HOOKBUS_INVALID_STOP:
    "An emergency stop names an unknown kind, an empty, too long or malformed name, or the stored stop list is malformed.",
  HOOKBUS_STOP_LIST_UNREADABLE:
    "A coordinator could not read the emergency stop list recently enough: a call waited for a fresh read within its deadline and none succeeded, so it is blocked (fail closed); or an approval could not settle to allow (it stays pending).",
  HOOKBUS_SHELL_PARSER_UNAVAILABLE:
    "Shell facts were asked for before the shell parser (tree-sitter-bash WebAssembly) was loaded, or its WebAssembly failed to load.",
  HOOKBUS_SHELL_UNPARSED:
    "A shell command does not parse as bash; its facts say `unparsed` instead of describing it.",
  HOOKBUS_SHELL_LIMIT:
    "A shell command is over a facts limit (length, nesting depth, number of commands); its facts say `unparsed` instead of describing it.",
  HOOKBUS_STREAM_RULE_INVALID:
    "A streaming redaction rule cannot be matched within a bounded window: no length cap or one over the limit (4,096 characters), a start that is empty, captures or is longer than the cap, or a pattern that matches the empty text.",
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

/** One problem found while validating a value against a schema. */
export interface ValidationIssue {
  /** Dotted path into the value, e.g. `messages.3.content`; empty for the value itself. */
  path: string;
  /** The rule that failed, as zod names it (`invalid_type`, `unrecognized_keys`, `too_small`, ...). */
  rule: string;
  message: string;
}

export interface HookbusErrorDetails {
  hook?: string;
  policy?: string;
  issues?: ValidationIssue[];
  [key: string]: unknown;
}

export class HookbusError extends Error {
  override readonly name = "HookbusError";
  readonly code: ErrorCode;
  readonly details: HookbusErrorDetails;

  constructor(
    code: ErrorCode,
    message: string,
    details: HookbusErrorDetails = {},
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.details = details;
  }

  /**
   * The plain form that crosses the wire and lands in the log: details only when there are any,
   * and JSON-safe (a cause or other object in the details becomes what JSON makes of it).
   */
  toJSON(): { code: ErrorCode; message: string; details?: HookbusErrorDetails } {
    if (Object.keys(this.details).length === 0) return { code: this.code, message: this.message };
    const details = JSON.parse(JSON.stringify(this.details)) as HookbusErrorDetails;
    return { code: this.code, message: this.message, details };
  }
}

export function isHookbusError(value: unknown, code?: ErrorCode): value is HookbusError {
  return value instanceof HookbusError && (code === undefined || value.code === code);
}
