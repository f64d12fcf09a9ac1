/** The MCP tool results the gateway answers with when a policy refuses, withholds or rewrites. */
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** A refused call: an MCP tool error the model reads, so it can explain or try something else. */
export function refusal(reason: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: reason }] };
}

/** A result the model must not see. */
export function withheld(reason: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: `[tool output withheld] ${reason}` }] };
}

/**
 * The result a policy's `content` stands for. The upstream's `structuredContent` is dropped: it
 * holds the original data, and a redaction that left it in place would leak what it removed.
 */
export function toolResultFromContent(
  content: string | ReadonlyArray<{ type: string }>,
  isError: boolean,
): CallToolResult {
  const candidate = {
    content: typeof content === "string" ? [{ type: "text", text: content }] : [...content],
    ...(isError ? { isError: true } : {}),
  };
  const parsed = CallToolResultSchema.safeParse(candidate);
  return parsed.success
    ? parsed.data
    : withheld("a policy replaced the output with content MCP cannot carry");
}
