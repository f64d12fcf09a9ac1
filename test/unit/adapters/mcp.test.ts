/** The MCP gateway's pure parts: what the upstream inherits, and the results a policy produces. */
import { describe, expect, it } from "vitest";
import { refusal, toolResultFromContent, withheld } from "../../../src/adapters/mcp/results.js";
import { upstreamEnvironment } from "../../../src/adapters/mcp/index.js";

describe("the MCP gateway", () => {
  it("gives the upstream server the gateway's environment without hookbus's or NATS's secrets", () => {
    const env = upstreamEnvironment({
      PATH: "/usr/bin",
      GITHUB_TOKEN: "for-the-server",
      NATS_CREDS: "/secrets/agent.creds",
      HOOKBUS_NKEY_SEED: "SUAxxx",
      NATS_URL: "nats://x",
    });
    expect(env).toEqual({ PATH: "/usr/bin", GITHUB_TOKEN: "for-the-server" });
  });

  it("answers a policy's text content as an MCP text result, never with the upstream's structuredContent", () => {
    expect(toolResultFromContent("[redacted]", false)).toEqual({
      content: [{ type: "text", text: "[redacted]" }],
    });
    expect(toolResultFromContent([{ type: "text", text: "a" } as { type: string }], true)).toEqual({
      content: [{ type: "text", text: "a" }],
      isError: true,
    });
  });

  it("withholds content MCP cannot carry rather than forwarding it", () => {
    const result = toolResultFromContent([{ type: "hologram" }], false);
    expect(result).toEqual(withheld("a policy replaced the output with content MCP cannot carry"));
    expect(refusal("no").isError).toBe(true);
  });
});
