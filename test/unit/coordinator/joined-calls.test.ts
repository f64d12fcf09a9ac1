/**
 * Re-sent calls join the run in flight: one run, one answer to every request that joined, and
 * only byte-identical re-sends of the same call on the same subject join.
 */
import { headers as natsHeaders, type Msg, type PublishOptions } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { Header } from "../../../src/bus/headers.js";
import { JoinedCalls } from "../../../src/coordinator/joined-calls.js";

/** A received request as the coordinator sees it: subject, call id header, body, respond. */
function request(subject: string, callId: string, body: string) {
  const answers: string[] = [];
  // As nats.js gives it: no header block at all, or the headers it had.
  const headers = callId === "" ? undefined : natsHeaders();
  if (callId !== "") headers!.set(Header.CallId, callId);
  const msg = {
    subject,
    data: new TextEncoder().encode(body),
    headers,
    respond(data?: Uint8Array, _options?: PublishOptions) {
      answers.push(new TextDecoder().decode(data));
      return true;
    },
  } as unknown as Msg;
  return { msg, answers };
}

const answer = new TextEncoder().encode("decision");

describe("JoinedCalls", () => {
  it("runs a call once and answers every byte-identical re-send with the run's answer", () => {
    const calls = new JoinedCalls();
    const first = request("ns.call.a.before_tool_call", "c1", '{"x":1}');
    const again = request("ns.call.a.before_tool_call", "c1", '{"x":1}');
    const third = request("ns.call.a.before_tool_call", "c1", '{"x":1}');
    const run = calls.admit(first.msg)!;
    expect(calls.admit(again.msg)).toBeUndefined();
    expect(calls.admit(third.msg)).toBeUndefined();
    run.msg.respond(answer);
    run.done();
    expect([first.answers, again.answers, third.answers]).toEqual([
      ["decision"],
      ["decision"],
      ["decision"],
    ]);
    // After the run, the same call runs again (a retry after the answer is the log's to dedupe).
    expect(calls.admit(request("ns.call.a.before_tool_call", "c1", '{"x":1}').msg)).toBeDefined();
  });

  it("runs a different body, another subject or a call without id on its own", () => {
    const calls = new JoinedCalls();
    const first = request("ns.call.a.before_tool_call", "c1", '{"x":1}');
    const run = calls.admit(first.msg)!;
    const otherBody = request("ns.call.a.before_tool_call", "c1", '{"x":2}');
    const otherSubject = request("ns.call.b.before_tool_call", "c1", '{"x":1}');
    const noId = request("ns.call.a.before_tool_call", "", '{"x":1}');
    for (const r of [otherBody, otherSubject, noId]) expect(calls.admit(r.msg)).toBeDefined();
    run.msg.respond(answer);
    expect(first.answers).toEqual(["decision"]);
    expect([otherBody.answers, otherSubject.answers, noId.answers]).toEqual([[], [], []]);
  });

  it("joins a re-send with no headers by the call id its body begins with, whatever time it has left", () => {
    const calls = new JoinedCalls();
    const call = (ms: number, x = 1) =>
      request("ns.call.a.before_tool_call", "", `{"timeoutMs":${ms},"callId":"c1","x":${x}}`);
    const first = call(5000);
    const again = call(3990);
    const other = call(3990, 2);
    const run = calls.admit(first.msg)!;
    expect(calls.admit(again.msg)).toBeUndefined();
    expect(calls.admit(other.msg)).toBeDefined();
    run.msg.respond(answer);
    expect([first.answers, again.answers, other.answers]).toEqual([["decision"], ["decision"], []]);
  });

  it("answers only the leader when nobody joined", () => {
    const calls = new JoinedCalls();
    const only = request("ns.call.a.before_tool_call", "c9", "{}");
    const run = calls.admit(only.msg)!;
    expect(run.msg).toBe(only.msg);
    run.msg.respond(answer);
    expect(only.answers).toEqual(["decision"]);
  });
});
