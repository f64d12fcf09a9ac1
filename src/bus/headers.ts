/**
 * NATS headers hookbus sets. Bodies are JSON; headers carry what routing and errors need, never
 * what the body already says (docs/protocol.md, "Headers").
 */
export const Header = {
  /** The call this message belongs to (agent call id). */
  CallId: "Hookbus-Call-Id",
  /** On a stored record: sha256 of the call's { hook, context, event } (retry vs reused id). */
  CallDigest: "Hookbus-Call-Digest",
  /** Milliseconds the sender will wait for the answer, from when it sent the message. */
  TimeoutMs: "Hookbus-Timeout-Ms",
  /** On an error reply: a stable code from docs/errors.md. Its presence marks the reply as an error. */
  ErrorCode: "Hookbus-Error-Code",
  /** How the body is encoded: absent (JSON), `gzip` (gzipped JSON), or `blob` (a reference to chunks). */
  Encoding: "Hookbus-Encoding",
} as const;
