/**
 * The fast hook's client (bin/claude-code-hook.mjs) answers closed on its own when its daemon
 * cannot: with bin/claude-code-failure.mjs, plain JavaScript that loads nothing of hookbus. Its
 * answers must be answerFailure's (src/adapters/claude-code/mapping.ts), event by event.
 */
import { describe, expect, it } from "vitest";
import { CLAUDE_CODE_EVENTS } from "../../../src/adapters/claude-code/input.js";
import { answerFailure } from "../../../src/adapters/claude-code/mapping.js";
import { HookbusError, type ErrorCode } from "../../../src/foundation/errors.js";

interface ClientFailure {
  eventNameOf(raw: unknown): string | undefined;
  failureAnswer(name: string, toolName: unknown, code: string, message: string): unknown;
}

const client = (await import(
  new URL("../../../bin/claude-code-failure.mjs", import.meta.url).href
)) as ClientFailure;

describe("the fast hook's closed answers", () => {
  const cases: Array<[ErrorCode, string]> = [
    ["HOOKBUS_DAEMON_UNAVAILABLE", "the hook daemon closed the connection without answering"],
    ["HOOKBUS_CALL_TIMEOUT", "TypeError: the hook daemon did not answer in time"],
  ];
  for (const event of CLAUDE_CODE_EVENTS)
    for (const tool of [undefined, "Bash", "mcp__mail__read_email"])
      it(`are answerFailure's for ${event}${tool === undefined ? "" : ` of ${tool}`}`, () => {
        for (const [code, message] of cases)
          expect(client.failureAnswer(event, tool, code, message)).toEqual(
            answerFailure(event, tool, new HookbusError(code, message)),
          );
      });

  it("name the same events as the hook's input schema", () => {
    for (const event of CLAUDE_CODE_EVENTS)
      expect(client.eventNameOf({ hook_event_name: event })).toBe(event);
    expect(client.eventNameOf({ hook_event_name: "Notification" })).toBeUndefined();
    expect(client.eventNameOf(null)).toBeUndefined();
  });
});
