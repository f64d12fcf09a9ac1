/**
 * examples/openai-agents.ts runs as it is, with no-shell served: exec is not offered to the
 * model, and its call is refused when executed (the refusal is the call's output, which the
 * model reads).
 */
import { describe, expect, it } from "vitest";
import { useNatsServer } from "../../support/nats.js";
import { runAdapterExample } from "./adapter-example.js";

const nats = useNatsServer();

describe("examples/openai-agents.ts", () => {
  it("the OpenAI Agents SDK agent is narrowed and gated by no-shell", async () => {
    expect(await runAdapterExample(nats, "openai-agents.ts")).toEqual([
      "tools offered to the model: read_file",
      "tools offered to the model: read_file",
      "read_file: ran read_file on README.md",
      'exec: HookbusError: before_tool_call blocked: tool "exec" was not offered to the model in this turn (before_llm_call removed it, or it was never offered)',
      "answer: I read README.md; exec was refused.",
      "",
    ]);
  }, 90_000);
});
