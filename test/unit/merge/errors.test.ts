/** Input the merge engine refuses, each with its stable error code. */
import { describe, expect, it } from "vitest";
import {
  HookbusError,
  OBSERVATIONAL_HOOK_NAMES,
  isHookbusError,
  mergeOutcomes,
  type ErrorCode,
  type PolicyOutcomeInput,
} from "../../../src/index.js";

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

function expectCode(fn: () => unknown, code: ErrorCode): HookbusError {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(HookbusError);
  expect((error as HookbusError).code).toBe(code);
  expect(isHookbusError(error, code)).toBe(true);
  return error as HookbusError;
}

const event = { toolName: "exec", params: { cmd: "ls" } };

describe("merge engine input errors", () => {
  it("throws HOOKBUS_DUPLICATE_POLICY when two outcomes name the same policy", () => {
    const error = expectCode(
      () =>
        mergeOutcomes("before_tool_call", event, [
          { policy: "dup", priority: 1, status: "ok", verdict: {} },
          { policy: "dup", priority: 2, status: "ok", verdict: { block: true } },
        ]),
      "HOOKBUS_DUPLICATE_POLICY",
    );
    expect(error.details).toMatchObject({ hook: "before_tool_call", policy: "dup" });
  });

  it("throws HOOKBUS_DUPLICATE_POLICY when an enforced and a shadow outcome share a name", () => {
    expectCode(
      () =>
        mergeOutcomes("before_tool_call", event, [
          { policy: "dup", priority: 1, status: "ok" },
          { policy: "dup", priority: 1, status: "ok", mode: "shadow" },
        ]),
      "HOOKBUS_DUPLICATE_POLICY",
    );
  });

  const malformed: Array<[string, unknown]> = [
    ["a missing policy name", { priority: 1, status: "ok" }],
    ["an empty policy name", { policy: "", priority: 1, status: "ok" }],
    ["a missing priority", { policy: "p", status: "ok" }],
    ["a NaN priority", { policy: "p", priority: Number.NaN, status: "ok" }],
    ["an infinite priority", { policy: "p", priority: Infinity, status: "ok" }],
    ["a string priority", { policy: "p", priority: "1", status: "ok" }],
    ["an unknown status", { policy: "p", priority: 1, status: "maybe" }],
    ["an unknown mode", { policy: "p", priority: 1, status: "ok", mode: "audit" }],
    ["an unknown failure mode", { policy: "p", priority: 1, status: "ok", failMode: "fail-soft" }],
    ["an unknown field", { policy: "p", priority: 1, status: "ok", verdictt: {} }],
    [
      "an error without a code",
      { policy: "p", priority: 1, status: "error", error: { message: "x" } },
    ],
    ["a negative latency", { policy: "p", priority: 1, status: "ok", latencyMs: -1 }],
    ["null", null],
  ];

  it.each(malformed)("throws HOOKBUS_INVALID_OUTCOME for %s", (_what, outcome) => {
    const error = expectCode(
      () =>
        mergeOutcomes("before_tool_call", event, [
          { policy: "fine", priority: 0, status: "ok" },
          outcome as PolicyOutcomeInput,
        ]),
      "HOOKBUS_INVALID_OUTCOME",
    );
    expect(error.message).toContain("outcome 1");
    expect(error.details.hook).toBe("before_tool_call");
  });

  it.each(OBSERVATIONAL_HOOK_NAMES)(
    "throws HOOKBUS_NOT_MODIFYING_HOOK for the observational hook %s",
    (hook) => {
      expectCode(() => mergeOutcomes(hook as never, {} as never, []), "HOOKBUS_NOT_MODIFYING_HOOK");
    },
  );

  it("throws HOOKBUS_UNKNOWN_HOOK for a hook that is not in the catalog", () => {
    expectCode(
      () => mergeOutcomes("before_everything" as never, {} as never, []),
      "HOOKBUS_UNKNOWN_HOOK",
    );
  });
});
