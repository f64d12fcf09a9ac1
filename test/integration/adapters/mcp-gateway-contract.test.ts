/**
 * The MCP gateway keeps its promises against an upstream that pages its tool list and has a tool
 * with an output schema (test/fixtures/mcp/paging-server.mjs): a hidden tool is refused whatever
 * pages the client listed (the decision is made per call), and a result a policy rewrote still
 * satisfies the MCP contract the real SDK client checks.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { definePolicy, runPolicy, type PolicyRunner } from "../../../src/index.js";
import { connectThroughProxy, mcpFixture, toolText, upstreamRan } from "../../support/mcp-host.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";

const pagingServer = mcpFixture("paging-server.mjs");
const dir = mkdtempSync(join(tmpdir(), "hookbus-mcp-contract-"));

const guard = definePolicy({
  name: "repo-guard",
  version: "1.0.0",
  hooks: {
    before_llm_call(event) {
      return {
        tools: (event.tools ?? []).filter((t) => !("name" in t) || t.name !== "delete_repo"),
      };
    },
    before_tool_result(event) {
      const text = JSON.stringify(event.result);
      if (text.includes("@")) return { content: "[redacted: the output held an email address]" };
      return undefined;
    },
  },
});

const nats = useNatsServer();
const namespace = uniqueNamespace("mcp-contract");
let coordinator: Coordinator;
let worker: PolicyRunner;
let client: Client;
const upstreamLog = join(dir, "paging.ndjson");

beforeAll(async () => {
  const nc = await nats.connect();
  coordinator = await startCoordinator({ nc, namespace });
  worker = await runPolicy(guard, { nc, namespace });
  await (
    await RegistryStore.open(nc, new Subjects(namespace))
  ).apply({
    policies: [
      { name: "repo-guard", hooks: ["before_llm_call", "before_tool_result"], priority: 100 },
    ],
  });
  await until(() => coordinator.registry().revision > 0, 10_000, "registry at the coordinator");
  client = await connectThroughProxy({
    url: nats.url(),
    namespace,
    upstream: pagingServer,
    upstreamLog,
  });
}, 90_000);

afterAll(async () => {
  await client?.close();
  await worker?.stop();
  await coordinator?.stop();
});

const ran = () => upstreamRan(upstreamLog).map((t) => t.name);

/** Every page of tools/list, as an MCP host walks it. */
async function listAllPages(): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const answer = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...answer.tools);
    cursor = answer.nextCursor;
    if (cursor === undefined) return tools;
  }
  throw new Error("tools/list did not end");
}

describe("the MCP gateway against a paging upstream with output schemas", () => {
  it("refuses a hidden tool after the client listed every page, and the upstream never runs it", async () => {
    const names = (await listAllPages()).map((t) => t.name);
    expect(names.sort()).toEqual(["list_repos", "read_text_file"]);
    const result = (await client.callTool({
      name: "delete_repo",
      arguments: { repo: "prod" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(toolText(result)).toContain("repo-guard");
    const listed = (await client.callTool({ name: "list_repos", arguments: {} })) as CallToolResult;
    expect(listed.isError).toBeUndefined();
    expect(ran()).toEqual(["list_repos"]);
  }, 60_000);

  it("refuses a hidden tool after the client listed only the last page", async () => {
    const last = await client.listTools({ cursor: "2" });
    expect(last.tools.map((t) => t.name)).not.toContain("delete_repo");
    const result = (await client.callTool({
      name: "delete_repo",
      arguments: { repo: "prod" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(ran()).not.toContain("delete_repo");
  }, 60_000);

  it("refuses a tool the upstream does not offer at all, without asking it", async () => {
    const result = (await client.callTool({
      name: "no_such_tool",
      arguments: {},
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(toolText(result)).toContain("not offered");
    expect(ran()).not.toContain("no_such_tool");
  }, 60_000);

  it("answers a redacted result the SDK client accepts for a tool with an output schema", async () => {
    const tools = await listAllPages();
    expect(tools.find((t) => t.name === "read_text_file")?.outputSchema).toBeUndefined();
    const result = (await client.callTool({
      name: "read_text_file",
      arguments: { path: "notes.txt" },
    })) as CallToolResult;
    expect(toolText(result)).toBe("[redacted: the output held an email address]");
    expect(JSON.stringify(result)).not.toContain("dana.reyes");
    expect(ran()).toContain("read_text_file");
  }, 60_000);
});
