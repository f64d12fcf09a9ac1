/**
 * examples/own-tools-policy.ts (docs/vocabulary.md "Your own tools"): a worker's code policy that
 * reads the registry file's `toolVocabulary` classifies a tool as the coordinator does under that
 * registry, so a Cedar rule and a code rule by class agree on `deploy`.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { invokePolicy, MemorySessionStateStore } from "../../../src/index.js";
import { parseRegistryDocument } from "../../../src/registry/document.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";
import { ownToolsGuard } from "../../../examples/own-tools-policy.js";

const REGISTRY = new URL("../../../examples/own-tools-registry.json", import.meta.url);
const ctx = { agentId: "a", sessionKey: "s", runId: "r" };

async function decide(toolName: string, command: string) {
  const result = await invokePolicy(
    ownToolsGuard,
    "before_tool_call",
    { toolName, toolCallId: "t", params: { command } },
    ctx,
    { callId: `c-${toolName}`, state: new MemorySessionStateStore() },
  );
  expect(result.status).toBe("ok");
  return result.verdict;
}

describe("a code policy with the registry file's vocabulary", () => {
  it("blocks rm -rf through the registry's own shell tool and a shipped one, not through others", async () => {
    expect(await decide("deploy", "rm -rf /")).toEqual({
      block: true,
      blockReason: "recursive delete through deploy",
    });
    expect(await decide("Bash", "rm -rf /")).toMatchObject({ block: true });
    expect(await decide("publish", "rm -rf /")).toBeUndefined();
    expect(await decide("deploy", "ls")).toBeUndefined();
  });

  it("agrees with the coordinator's vocabulary for the same registry file", () => {
    const document = parseRegistryDocument(JSON.parse(readFileSync(REGISTRY, "utf8")));
    const { vocabulary } = new RegistrySnapshot(1, document);
    expect(vocabulary.classify("deploy").class).toBe("shell");
    expect(vocabulary.classify("notify_ops").class).toBe("send-message");
  });
});
