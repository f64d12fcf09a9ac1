/**
 * How each modifying hook merges, as a table: the rules a hook composes, nothing else. Adding a
 * hook is adding a row. `docs/merge-rules.md` is this table in prose, with the test behind each
 * rule.
 */
import {
  toolCallId,
  toolDefinitionName,
  type ToolCall,
  type ToolDefinition,
} from "../catalog/common.js";
import type { ModifyingHookName } from "../catalog/catalog.js";
import { approvalRequest } from "./rules/approval-request.js";
import { blockLatch } from "./rules/block-latch.js";
import { boundedByOriginal } from "./rules/bounded.js";
import { emptyStringBlocks } from "./rules/empty-blocks.js";
import { crossLocked, firstWriter } from "./rules/first-writer.js";
import { intersection } from "./rules/intersection.js";
import type { MergeRule } from "./rules/rule.js";

export interface HookMergeDeclaration {
  rules: readonly MergeRule[];
  /** The decision field whose presence means "answer with this instead" (outcome `reply`). */
  replyField?: string;
  /** The decision field whose presence means "wait for a person" (outcome `pending_approval`). */
  approvalField?: string;
}

function keyOfEntry(entry: unknown, key: "name" | "id"): string | undefined {
  if (typeof entry !== "object" || entry === null) return undefined;
  if (key === "name") return toolDefinitionName(entry as ToolDefinition);
  return toolCallId(entry);
}

const toolsByName = intersection<ToolDefinition>("tools", {
  allowedKey: (entry) => keyOfEntry(entry, "name"),
  originalKey: toolDefinitionName,
  originalField: "tools",
});

const toolCallsById = intersection<ToolCall>("toolCalls", {
  allowedKey: (entry) => keyOfEntry(entry, "id"),
  originalKey: toolCallId,
  originalField: "toolCalls",
});

export const mergeDeclarations: Record<ModifyingHookName, HookMergeDeclaration> = {
  before_agent_reply: {
    // Verdicts cannot block here; the latch is for policies that fail closed (an operator's choice).
    rules: [firstWriter("reply", { companion: "reason" }), blockLatch()],
    replyField: "reply",
  },
  before_llm_call: {
    rules: [firstWriter("messages"), firstWriter("systemPrompt"), toolsByName, blockLatch()],
  },
  after_llm_call: {
    rules: [toolCallsById, blockLatch()],
  },
  before_tool_call: {
    // The approval is for the params as merged (first writer wins), never for the original ones.
    rules: [firstWriter("params"), approvalRequest(), blockLatch()],
    approvalField: "requireApproval",
  },
  before_tool_result: {
    rules: [firstWriter("content"), blockLatch()],
  },
  before_response_emit: {
    rules: [
      ...crossLocked("content", "allContent"),
      boundedByOriginal("allContent"),
      emptyStringBlocks("content"),
      blockLatch(),
    ],
  },
};
