/**
 * Which of the upstream's tools the gateway offers, decided per question and never from listing
 * history: the upstream's whole tool list (every page, cached until the upstream says it changed)
 * goes through `before_llm_call` each time, for a listing and for every call. A client that lists
 * page 2 after page 1, or never lists at all, cannot reach a tool the current policies hide.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { HookbusClient } from "../../agent/client.js";
import type { HookContextInput } from "../../catalog/input.js";
import { HookbusError } from "../../foundation/errors.js";

/** The upstream's tool list is read at most this many pages deep. */
export const MAX_UPSTREAM_TOOL_PAGES = 100;
/** And holds at most this many tools; more is refused rather than partly checked. */
export const MAX_UPSTREAM_TOOLS = 5_000;

/** The upstream's tools, all pages, read once and again after `invalidate()`. */
export class UpstreamTools {
  private cached: Promise<Tool[]> | undefined;
  constructor(private readonly upstream: Client) {}

  all(): Promise<Tool[]> {
    this.cached ??= this.readAll().catch((error: unknown) => {
      this.cached = undefined; // a failed read is not remembered
      throw error;
    });
    return this.cached;
  }

  invalidate(): void {
    this.cached = undefined;
  }

  private async readAll(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_UPSTREAM_TOOL_PAGES; page++) {
      const answer = await this.upstream.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...answer.tools);
      if (tools.length > MAX_UPSTREAM_TOOLS) break;
      cursor = answer.nextCursor;
      if (cursor === undefined) return tools;
    }
    throw new HookbusError(
      "HOOKBUS_LIMIT_EXCEEDED",
      `the upstream MCP server lists more than ${MAX_UPSTREAM_TOOLS} tools or ${MAX_UPSTREAM_TOOL_PAGES} pages: the gateway offers none rather than check part of them`,
      { maxTools: MAX_UPSTREAM_TOOLS, maxPages: MAX_UPSTREAM_TOOL_PAGES },
    );
  }
}

export interface Offer {
  /** The tools the client may see and call, in the upstream's order. */
  visible: Tool[];
  /** The upstream's tools a policy hid, with the reason a call of one is refused. */
  hidden: ReadonlyMap<string, string>;
}

/** The current policies' answer: which of `tools` are offered in this session. */
export async function decideOffer(
  hookbus: HookbusClient,
  ctx: HookContextInput<"before_llm_call">,
  tools: Tool[],
): Promise<Offer> {
  const decision = await hookbus.decide("before_llm_call", ctx, { messages: [], tools });
  const hidden = new Map<string, string>();
  if (decision.outcome === "block") {
    const reason = `hookbus (${decision.blockedBy ?? "policy"}): ${decision.blockReason ?? "tools withheld"}`;
    for (const tool of tools) hidden.set(tool.name, reason);
    return { visible: [], hidden };
  }
  if (decision.tools === undefined) return { visible: tools, hidden };
  const kept = new Set(decision.tools.map((t) => ("name" in t ? String(t.name) : "")));
  const by = (decision.decidedBy.tools ?? []).join(", ") || "policy";
  for (const tool of tools)
    if (!kept.has(tool.name)) hidden.set(tool.name, `hookbus (${by}): the tool is not available`);
  return { visible: tools.filter((tool) => kept.has(tool.name)), hidden };
}

/**
 * A tool as the gateway lists it: without its `outputSchema`. A policy at `before_tool_result` may
 * replace any result (and the registry may gain such a policy at any time), and MCP requires a
 * tool with an output schema to answer structured content that matches it; a replaced result
 * carries none (it would hold the data the policy removed). docs/adapters/mcp.md says so.
 */
export function listedTool(tool: Tool): Tool {
  if (tool.outputSchema === undefined) return tool;
  const { outputSchema: _withdrawn, ...rest } = tool;
  return rest;
}
