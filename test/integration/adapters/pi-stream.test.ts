/**
 * `hookbus/pi` in the edge mode (issue 34): with no before_response_emit policy registered,
 * subscribers see the answer's deltas as the model streams them, through the edge's redactor, on
 * real NATS with a coordinator and policy workers and the real pi Agent.
 */
import { Agent, type AgentEvent, type StreamFn } from "@mariozechner/pi-agent-core";
import { streaming, updates } from "../../support/pi-stream.js";
import { describe, expect, it } from "vitest";
import { attachHookbus, withHookbusRun } from "../../../src/adapters/pi/index.js";
import { gate, until } from "../../support/wait.js";
import { useNatsServer } from "../pipeline/harness.js";
import { useScriptedPiModels } from "./pi-model.js";
import { maxThreeCalls, noExec, pipelineOn } from "./policies.js";

const nats = useNatsServer();
const pipeline = pipelineOn(nats);
const scriptedModel = useScriptedPiModels();
const KEY = "sk-proj-7Tq9ZrX2mLw8VbN4cK1pY6hJ3sD5fG0a";

function piAgent(streamFn: StreamFn) {
  const { model } = scriptedModel([]);
  const agent = new Agent({ initialState: { model, systemPrompt: "You help.", tools: [] } });
  agent.streamFn = streamFn;
  attachHookbus(agent);
  const events: AgentEvent[] = [];
  agent.subscribe((event) => void events.push(event));
  return { agent, events };
}

describe("hookbus/pi in the edge mode", () => {
  it("a secret split across two deltas never appears in any event, at any split offset", async () => {
    const p = await pipeline([noExec, maxThreeCalls]);
    const answer = `Use ${KEY} on staging.`;
    for (let cut = 4; cut <= 4 + KEY.length; cut++) {
      const { agent, events } = piAgent(streaming([answer.slice(0, cut), answer.slice(cut)]));
      await withHookbusRun(
        { client: p.client, agentId: "pi-agent", sessionKey: `s-split-${cut}` },
        () => agent.prompt("which key?"),
      );
      expect(agent.state.errorMessage).toBeUndefined();
      const shown = updates(events);
      expect(shown.at(-1)).toBe("Use [secret:openai-key] on staging.");
      for (const piece of [KEY.slice(0, 10), KEY.slice(-10)]) {
        expect(JSON.stringify(events)).not.toContain(piece);
        expect(JSON.stringify(agent.state.messages)).not.toContain(piece);
      }
    }
  });

  it("subscribers see the first token before the model finished", async () => {
    const p = await pipeline([noExec, maxThreeCalls]);
    const resume = gate();
    const opening = "Here is the plan for the migration, step by step, as we agreed on Monday. ";
    const { agent, events } = piAgent(
      streaming([opening, "Back up first. ", "Then migrate."], { at: 1, resume: resume.promise }),
    );
    await withHookbusRun(
      { client: p.client, agentId: "pi-agent", sessionKey: "s-ttft" },
      async () => {
        const prompt = agent.prompt("plan?");
        await until(() => (updates(events).at(-1) ?? "").length > 0, 5000, "a first update");
        expect(opening.startsWith(updates(events).at(-1)!)).toBe(true);
        resume.open();
        await prompt;
      },
    );
    expect(updates(events).at(-1)).toBe(`${opening}Back up first. Then migrate.`);
  });
});
