/**
 * `hookbus/pi` with a streaming bus policy (issue 34, item 2): a before_response_emit policy
 * registered `stream: true` is asked window by window, on real NATS with a coordinator and its
 * worker and the real pi Agent. Its block at the 500th token cuts the answer: pi's error message
 * carries HOOKBUS_BLOCKED, and no event shows anything the model wrote after the cut.
 */
import { Agent, type AgentEvent } from "@mariozechner/pi-agent-core";
import { streaming, updates } from "../../support/pi-stream.js";
import { describe, expect, it } from "vitest";
import { attachHookbus, withHookbusRun } from "../../../src/adapters/pi/index.js";
import {
  expectCutAt500,
  expectNothingFrom500,
  expectOneAnswerEnd,
  stopAt500,
  streamingPolicy,
  TOKENS,
} from "../../support/stream-windows.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";
import { useScriptedPiModels } from "./pi-model.js";
import { decisionsOf } from "./policies.js";

const nats = useNatsServer();
const scriptedModel = useScriptedPiModels();

describe("hookbus/pi with a streaming bus policy", () => {
  it("a block at the 500th token cuts the answer: a coded error, nothing shown after the cut", async () => {
    const p = await startPipeline(nats.url(), streamingPolicy(stopAt500));
    const { model } = scriptedModel([]);
    const agent = new Agent({ initialState: { model, systemPrompt: "Count.", tools: [] } });
    agent.streamFn = streaming(TOKENS);
    attachHookbus(agent, { streamWindow: { chars: 64 } });
    const events: AgentEvent[] = [];
    agent.subscribe((event) => void events.push(event));
    await withHookbusRun({ client: p.client, agentId: "pi-agent", sessionKey: "s-cut" }, () =>
      agent.prompt("count"),
    );
    expect(agent.state.errorMessage).toContain("HOOKBUS_BLOCKED");
    const shown = updates(events).filter((text) => text !== "");
    expect(shown.length).toBeGreaterThan(10);
    const all = JSON.stringify(events) + JSON.stringify(agent.state.messages);
    expectNothingFrom500(all);
    const last = shown.at(-1)!;
    expectCutAt500(last);

    expectOneAnswerEnd(await decisionsOf(p, "before_response_emit"), last);
  });
});
