/**
 * redact-secrets: replaces API keys and private keys before the model reads a tool's result, and
 * in the final answer before it is delivered.
 */
import { definePolicy } from "hookbus";

const SECRETS = [
  /\bsk-[A-Za-z0-9_-]{16,}\b/g, // OpenAI-style keys
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, // GitHub tokens
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

/** The text with every secret replaced, or undefined when there was none. */
function redact(text: string): string | undefined {
  let out = text;
  for (const pattern of SECRETS) out = out.replace(pattern, "[redacted secret]");
  return out === text ? undefined : out;
}

export const redactSecrets = definePolicy({
  name: "redact-secrets",
  version: "1.0.0",
  hooks: {
    before_tool_result(event) {
      const text = typeof event.result === "string" ? event.result : JSON.stringify(event.result);
      const redacted = text === undefined ? undefined : redact(text);
      return redacted === undefined ? undefined : { content: redacted };
    },
    before_response_emit(event) {
      const redacted = redact(event.content);
      return redacted === undefined ? undefined : { content: redacted };
    },
  },
});
