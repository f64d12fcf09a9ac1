/**
 * examples/ai-sdk.ts runs as it is, with no-shell served: exec is not offered to the model, and
 * its call is refused when executed.
 */
import { describe, expect, it } from "vitest";
import { useNatsServer } from "../../support/nats.js";
import { runAdapterExample } from "./adapter-example.js";

const nats = useNatsServer();

describe("examples/ai-sdk.ts", () => {
  it("the AI SDK agent is narrowed and gated by no-shell", async () => {
    expect(await runAdapterExample(nats, "ai-sdk.ts")).toEqual([
      "tools offered to the model: read_file",
      "tools offered to the model: read_file",
      "read_file: ran read_file on README.md",
      'exec: refused: HookbusError: before_tool_call blocked: tool "exec" was not offered to the model in this turn (before_llm_call removed it, or it was never offered)',
      "answer: I read README.md; exec was refused.",
      "",
    ]);
  }, 90_000);
});
