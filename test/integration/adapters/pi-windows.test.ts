/**
 * `hookbus/pi` with a streaming bus policy (issue 34, item 2): a before_response_emit policy
 * registered `stream: true` is asked window by window, on real NATS with a coordinator and its
 * worker and the real pi Agent. Its block at the 500th token cuts the answer: pi's error message
 * carries HOOKBUS_BLOCKED, and no event shows anything the model wrote after the cut.
 */
import { Agent, type AgentEvent, type StreamFn } from "@mariozechner/pi-agent-core";
import {
  createAssistantMessageEventStream,
  type AssistantMessage,
  type AssistantMessageEvent,
} from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { definePolicy, type DecisionRecord } from "../../../src/index.js";
import { attachHookbus, withHookbusRun } from "../../../src/adapters/pi/index.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";
import { useScriptedPiModels } from "./pi-model.js";
import { decisionsOf } from "./policies.js";

const nats = useNatsServer();
const scriptedModel = useScriptedPiModels();

const token = (i: number) => `w${i} `;
const TOKENS = Array.from({ length: 1000 }, (_, i) => token(i + 1));

const stopAt500 = definePolicy({
  name: "stop-at-500",
  hooks: {
    before_response_emit: (event) =>
      event.stream?.window !== undefined && event.content.includes(token(500))
        ? { block: true, blockReason: "the answer went too far" }
        : undefined,
  },
});

/** A streamFn sending `deltas` as one text block; before delta `pause.at` it waits. */
function streaming(deltas: string[], pause?: { at: number; resume: Promise<void> }): StreamFn {
  return (model) => {
    const stream = createAssistantMessageEventStream();
    const message = (text: string): AssistantMessage => ({
      role: "assistant",
      content: [{ type: "text", text }],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: {
        input: 1,
        output: 1,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 2,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "stop",
      timestamp: Date.now(),
    });
    void (async () => {
      let text = "";
      const push = (event: AssistantMessageEvent) => stream.push(event);
      push({ type: "start", partial: message("") });
      push({ type: "text_start", contentIndex: 0, partial: message("") });
      for (const [i, delta] of deltas.entries()) {
        if (i === pause?.at) await pause.resume;
        text += delta;
        push({ type: "text_delta", contentIndex: 0, delta, partial: message(text) });
      }
      push({ type: "text_end", contentIndex: 0, content: text, partial: message(text) });
      push({ type: "done", reason: "stop", message: message(text) });
      stream.end();
    })();
    return stream;
  };
}

/** The text the last update (or end) of the assistant message showed. */
function updates(events: AgentEvent[]): string[] {
  return events.flatMap((e) =>
    (e.type === "message_update" || e.type === "message_end") && e.message.role === "assistant"
      ? [e.message.content.map((b) => (b.type === "text" ? b.text : "")).join("")]
      : [],
  );
}

describe("hookbus/pi with a streaming bus policy", () => {
  it("a block at the 500th token cuts the answer: a coded error, nothing shown after the cut", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          { name: stopAt500.name, hooks: ["before_response_emit"], priority: 100, stream: true },
        ],
      },
      policies: [stopAt500],
    });
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
    for (let i = 500; i <= 1000; i++) expect(all).not.toContain(`w${i} `);
    const last = shown.at(-1)!;
    expect(last.endsWith("[the answer went too far]")).toBe(true);
    const before = last.slice(0, -"[the answer went too far]".length);
    expect(TOKENS.join("").startsWith(before)).toBe(true);
    expect(before.length).toBeGreaterThan(token(400).length * 400);

    const emits = await decisionsOf(p, "before_response_emit");
    const end = emits.filter((r) => windowOf(r) === undefined);
    expect(end).toHaveLength(1);
    expect((end[0]!.event as { stream: { shown: string } }).stream.shown).toBe(last);
  });
});

function windowOf(record: DecisionRecord): number | undefined {
  return (record.event as { stream?: { window?: number } }).stream?.window;
}
