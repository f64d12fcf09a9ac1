import { describe, expect, it } from "vitest";
import {
  afterToolCall,
  afterToolOutput,
  emptySessionFacts,
} from "../../../src/cedar/session-facts.js";
import { toolVocabulary } from "../../../src/vocabulary/vocabulary.js";

describe("session facts", () => {
  it("count an allowed call without changing the facts they started from, fields in one order", () => {
    const before = emptySessionFacts();
    const snapshot = structuredClone(before);
    const after = afterToolCall(before, toolVocabulary.classify("web_fetch"));
    expect(before).toEqual(snapshot);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(Object.keys(after.classCounts)).toEqual(Object.keys(before.classCounts));
    expect(after.toolCalls).toBe(1);
    expect(after.toolsCalled).toEqual(["web_fetch"]);
    expect(after.classesCalled).toEqual(["web-fetch"]);
    expect(after.classCounts["web-fetch"]).toBe(1);
    expect(after.classCounts.shell).toBe(0);
    expect(after.taint).toBe(before.taint);
    const again = afterToolCall(after, toolVocabulary.classify("web_fetch"));
    expect(again.classCounts["web-fetch"]).toBe(2);
    expect(again.toolsCalled).toEqual(["web_fetch"]);
    expect(after.classCounts["web-fetch"]).toBe(1);
  });

  it("taint a session with a fetched page's output, keeping every other fact", () => {
    const called = afterToolCall(emptySessionFacts(), toolVocabulary.classify("web_fetch"));
    const tainted = afterToolOutput(called, toolVocabulary.classify("web_fetch"));
    expect(tainted).toEqual({ ...called, taint: ["web-fetch"] });
    expect(Object.keys(tainted)).toEqual(Object.keys(called));
    expect(called.taint).toEqual([]);
    expect(afterToolOutput(tainted, toolVocabulary.classify("web_fetch"))).toBe(tainted);
  });
});
