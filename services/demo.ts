/**
 * The demo. For now it shows the merge engine deciding a few calls of a scripted session with
 * three policies; the pipeline over NATS replaces it as the services land.
 */
import { mergeOutcomes, type MergeResult, type ModifyingHookName } from "../src/index.js";

function show<H extends ModifyingHookName>(result: MergeResult<H>): void {
  const { decision } = result;
  const who = Object.entries(decision.decidedBy)
    .map(([field, by]) => `${field}←${by.join(",")}`)
    .join(" ");
  const reason = decision.outcome === "block" ? ` (${decision.blockReason})` : "";
  console.log(`${result.hook.padEnd(22)} ${decision.outcome.padEnd(7)}${reason} ${who}`);
}

show(
  mergeOutcomes(
    "before_llm_call",
    {
      messages: [{ role: "user", content: "summarise my inbox" }],
      tools: [{ name: "read_email" }, { name: "send_email" }, { name: "exec" }],
    },
    [
      {
        policy: "tool-allowlist",
        priority: 100,
        status: "ok",
        verdict: { tools: [{ name: "read_email" }, { name: "send_email" }] },
      },
      {
        policy: "no-outbound",
        priority: 50,
        status: "ok",
        verdict: { tools: [{ name: "read_email" }] },
      },
    ],
  ),
);
show(
  mergeOutcomes("before_tool_call", { toolName: "exec", params: { command: "rm -rf /" } }, [
    {
      policy: "tool-allowlist",
      priority: 100,
      status: "ok",
      verdict: { block: true, blockReason: "exec is not allowed" },
    },
    {
      policy: "audit-only",
      priority: 10,
      status: "ok",
      verdict: { block: false, blockReason: "looks fine" },
    },
  ]),
);
show(
  mergeOutcomes(
    "before_response_emit",
    { content: "mail me at a@b.example", allContent: ["mail me at a@b.example"] },
    [
      {
        policy: "pii-redactor",
        priority: 100,
        status: "ok",
        verdict: { content: "mail me at [email]" },
      },
      {
        policy: "late-rewriter",
        priority: 10,
        status: "ok",
        verdict: { allContent: ["original text back"] },
      },
    ],
  ),
);
show(
  mergeOutcomes(
    "before_tool_result",
    { toolName: "web_fetch", params: {}, result: "…", isError: false },
    [{ policy: "injection-screen", priority: 100, status: "timeout" }],
  ),
);
