/**
 * before_agent_reply for the framework adapters: asked once per run, before its first LLM call,
 * when the run starts with a user's message. A policy's reply short-circuits the run: the adapter
 * answers with it and the model is never called. A run that resumes (its first LLM call follows
 * tool results or an approval answer, not a user's message) is not a new reply: nothing is asked.
 */
import type { MessageInput } from "../../catalog/input.js";
import { askHook } from "./decide.js";
import type { HookbusRun } from "./run.js";

/** The runs whose before_agent_reply moment has passed (asked, or not a user's turn). */
const passed = new WeakSet<HookbusRun>();

/**
 * The reply a policy gives instead of running the agent, or undefined (run the agent). Asked at
 * most once per run; `userText` is the user's message that starts the run, undefined when the
 * run does not start with one. Throws HookbusBlockedError on a block (an emergency stop, a
 * policy configured fail-closed that failed) and what the client throws when hookbus cannot be
 * asked, like every other hook an adapter asks.
 */
export async function decideAgentReply(
  run: HookbusRun,
  userText: string | undefined,
): Promise<string | undefined> {
  if (!run.asks.agentReply || passed.has(run)) return undefined;
  passed.add(run);
  if (userText === undefined) return undefined;
  const decision = await askHook(run, "before_agent_reply", run.context, {
    cleanedBody: userText,
  });
  return decision.outcome === "reply" ? decision.reply?.text : undefined;
}

/**
 * The text of the last message when it is the user's (`role: "user"`), else undefined. Content
 * is a string or a list of parts; the text parts (`text`, `input_text`) are joined.
 */
export function lastUserText(messages: readonly MessageInput[]): string | undefined {
  const last = messages.at(-1);
  if (last?.role !== "user") return undefined;
  const content = last.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => {
      const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
      return (type === "text" || type === "input_text") && typeof text === "string" ? text : "";
    })
    .join("");
}
