/** The emergency stop's pure parts: targets, matching, and the outcome that blocks every hook. */
import { describe, expect, it } from "vitest";
import { MODIFYING_HOOK_NAMES } from "../../../src/catalog/catalog.js";
import { mergeOutcomes } from "../../../src/merge/merge.js";
import {
  emergencyStopOutcome,
  emergencyStopReason,
} from "../../../src/coordinator/emergency-stop.js";
import {
  parseStopDocument,
  parseStopTarget,
  StopList,
  StopStore,
  type Stop,
} from "../../../src/registry/stops.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";
import { toolVocabulary } from "../../../src/vocabulary/vocabulary.js";

const at = "2026-11-26T20:00:00.000Z";
const stop = (kind: Stop["kind"], name: string): Stop => ({
  kind,
  name,
  by: "ops",
  at,
  reason: "r",
});

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (error) {
    return isHookbusError(error) ? error.code : "uncoded";
  }
  return undefined;
}

describe("stop targets", () => {
  it("accepts agents, tools and tool classes", () => {
    expect(parseStopTarget("agent", "a-1")).toEqual({ kind: "agent", name: "a-1" });
    expect(parseStopTarget("tool", "mcp__github__delete_repo").name).toBe(
      "mcp__github__delete_repo",
    );
    expect(parseStopTarget("tool", "class:shell").name).toBe("class:shell");
  });

  it.each([
    ["robot", "x"],
    [undefined, "x"],
    ["tool", ""],
    ["tool", " exec"],
    ["tool", "ex\u0000ec"],
    ["agent", "a".repeat(257)],
    ["tool", "class:teleport"],
    ["agent", "class:shell"],
  ])("refuses %s %j with HOOKBUS_INVALID_STOP", (kind, name) => {
    expect(codeOf(() => parseStopTarget(kind, name))).toBe("HOOKBUS_INVALID_STOP");
  });

  it("refuses a malformed stored list", () => {
    expect(codeOf(() => parseStopDocument({ stops: "all" }, "x"))).toBe("HOOKBUS_INVALID_STOP");
    expect(
      codeOf(() => parseStopDocument({ stops: [{ ...stop("tool", "x"), at: "now" }] }, "x")),
    ).toBe("HOOKBUS_INVALID_STOP");
  });
});

describe("matching a call", () => {
  const list = new StopList(3, [
    stop("tool", "exec"),
    stop("tool", "class:file-write"),
    stop("agent", "bad"),
  ]);

  it("matches an exact tool name, a tool's class, and an agent on every call", () => {
    expect(list.stopFor({ agentId: "a", toolName: "exec" })?.name).toBe("exec");
    expect(list.stopFor({ agentId: "a", toolName: "Exec" })).toBeUndefined();
    expect(list.stopFor({ agentId: "a", toolName: "Write" })?.name).toBe("class:file-write");
    expect(list.stopFor({ agentId: "a", toolName: "read_file" })).toBeUndefined();
    expect(list.stopFor({ agentId: "bad" })?.kind).toBe("agent");
    expect(list.stopFor({ agentId: "a" })).toBeUndefined();
  });

  it("matches a class by the vocabulary it is given (the registry's own tools)", () => {
    const shell = new StopList(1, [stop("tool", "class:shell")]);
    const vocabulary = toolVocabulary.extend({ names: { deploy: "shell" } });
    expect(shell.stopFor({ agentId: "a", toolName: "deploy" })).toBeUndefined();
    expect(shell.stopFor({ agentId: "a", toolName: "deploy", vocabulary })?.name).toBe(
      "class:shell",
    );
  });

  it("names who stopped what, when and why; blocks everything when unreadable", () => {
    const call = {
      hook: "before_tool_call" as const,
      agentId: "a",
      context: {},
      event: { toolName: "exec" },
      snapshot: RegistrySnapshot.empty(),
    };
    expect(emergencyStopReason({ readable: true, list }, call)).toBe(
      `emergency stop: tool exec stopped by ops at ${at}: r`,
    );
    expect(emergencyStopReason({ readable: true, list: StopList.empty() }, call)).toBeUndefined();
    expect(
      emergencyStopReason(
        { readable: false, why: "timeout", list: StopList.empty(), waitable: true },
        call,
      ),
    ).toMatch(/^emergency stop list unreadable \(HOOKBUS_STOP_LIST_UNREADABLE: timeout\)/);
    expect(emergencyStopReason(undefined, call)).toBeUndefined();
  });
});

describe("the outcome", () => {
  it.each(MODIFYING_HOOK_NAMES)("blocks %s, decided by hookbus:emergency-stop", (hook) => {
    const result = mergeOutcomes(hook, {} as never, [emergencyStopOutcome(hook, "why")], {
      ownOutcomes: true,
    });
    expect(result.decision.outcome).toBe("block");
    expect(result.decision.blockedBy).toBe("hookbus:emergency-stop");
    expect(result.decision.blockReason).toContain("why");
  });
});

describe("the store", () => {
  it("refuses a malformed change with a coded error before touching the bucket", async () => {
    const store = new StopStore(undefined as never);
    const bad = { action: "stop", kind: "tool", name: "", by: "ops", at, reason: "" } as const;
    await expect(store.change(bad)).rejects.toMatchObject({ code: "HOOKBUS_INVALID_STOP" });
  });
});
