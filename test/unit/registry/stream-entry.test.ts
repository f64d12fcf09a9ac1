/**
 * The registry's `stream` flag and what it means for a streamed answer (issue 34, item 2): only a
 * before_response_emit entry may opt in, and the answer streams in windows only while every
 * policy of that hook opted in.
 */
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { parseRegistryDocument } from "../../../src/registry/document.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";
import { checkCadence } from "../../../src/adapters/core/stream-windows.js";
import { askedAbout } from "../../../src/coordinator/stream-window.js";

const entry = (name: string, hooks: string[], stream?: boolean) => ({
  name,
  hooks,
  priority: 100,
  ...(stream === undefined ? {} : { stream }),
});

const snapshotOf = (...policies: ReturnType<typeof entry>[]) =>
  new RegistrySnapshot(1, parseRegistryDocument({ policies }));

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("registry stream flag", () => {
  it("is refused on an entry without before_response_emit", () => {
    const error = thrown(() =>
      parseRegistryDocument({ policies: [entry("p", ["before_tool_call"], true)] }),
    );
    expect(isHookbusError(error, "HOOKBUS_INVALID_REGISTRY"), String(error)).toBe(true);
    expect(String(JSON.stringify(error))).toContain("stream_without_response_hook");
  });

  it("streams in windows only while every response policy opted in", () => {
    expect(snapshotOf(entry("t", ["before_tool_call"])).responseStreaming()).toBe("edge");
    expect(snapshotOf(entry("a", ["before_response_emit"], true)).responseStreaming()).toBe(
      "windows",
    );
    const mixed = snapshotOf(
      entry("a", ["before_response_emit"], true),
      entry("b", ["before_response_emit", "before_tool_call"]),
    );
    expect(mixed.responseStreaming()).toBe("hold");
    expect(snapshotOf(entry("a", ["before_response_emit"], false)).responseStreaming()).toBe(
      "hold",
    );
  });

  it("a window event asks only the opted-in policies; the end event asks all", () => {
    const policies = snapshotOf(
      entry("a", ["before_response_emit"], true),
      entry("b", ["before_response_emit"]),
    ).policiesFor("before_response_emit");
    const window = { content: "x", allContent: ["x"], stream: { window: 1, offset: 0 } };
    const end = { content: "x", allContent: ["x"], stream: { offset: 0, shown: "x" } };
    expect(askedAbout(policies, window).map((p) => p.name)).toEqual(["a"]);
    expect(askedAbout(policies, end).map((p) => p.name)).toEqual(["a", "b"]);
    expect(askedAbout(policies, { content: "x" }).map((p) => p.name)).toEqual(["a", "b"]);
  });
});

describe("stream window cadence", () => {
  it("has defaults and refuses values out of its limits with a coded error", () => {
    expect(checkCadence()).toEqual({ chars: 256, ms: 250 });
    for (const bad of [
      { chars: 15 },
      { chars: 16_385 },
      { ms: 9 },
      { ms: 10_001 },
      { chars: 1.5 },
    ]) {
      const error = thrown(() => checkCadence(bad));
      expect(isHookbusError(error, "HOOKBUS_INVALID_ARGUMENT"), JSON.stringify(bad)).toBe(true);
    }
  });
});
