import { afterAll, describe, expect, it } from "vitest";
import { emptySessionFacts, evaluateCedar } from "../../../src/cedar/index.js";
import { CedarSetLoader } from "../../../src/cedar/loader.js";
import { isHookbusError } from "../../../src/foundation/errors.js";

const EXEC = `@id("no-exec") @reason("no exec")
forbid (principal, action == Action::"before_tool_call", resource == Tool::"exec");`;
const loader = new CedarSetLoader();
afterAll(() => loader.close());

async function codeOf(loading: Promise<unknown>): Promise<string | undefined> {
  try {
    await loading;
    return undefined;
  } catch (error) {
    return isHookbusError(error) ? error.code : `uncoded: ${String(error)}`;
  }
}

describe("loading a Cedar set in the load thread", () => {
  it("gives a set that decides like one parsed here", async () => {
    const set = await loader.load(EXEC, "exec.cedar");
    const result = evaluateCedar(set, {
      hook: "before_tool_call",
      context: { agentId: "a", sessionKey: "s" },
      event: { toolName: "exec", params: {} },
      session: emptySessionFacts(),
    });
    expect(result.verdict).toEqual({ block: true, blockReason: "no exec (Cedar policy no-exec)" });
  });

  it("refuses what does not parse or type-check, naming the policy", async () => {
    expect(await codeOf(loader.load("forbid (", "bad.cedar"))).toBe("HOOKBUS_INVALID_CEDAR");
    const typed = `@id("typo") forbid (principal, action == Action::"before_tool_call", resource is Tool) when { resource.nmae == "x" };`;
    const error = await loader.load(typed, "typo.cedar").catch((e: unknown) => e);
    expect(isHookbusError(error) && error.details.issues?.[0]?.path).toBe("typo");
  });

  it("refuses a set over a limit before the thread sees it", async () => {
    const deep = `forbid (principal, action, resource) when { ${"(".repeat(100)}true${")".repeat(100)} };`;
    expect(await codeOf(loader.load(deep, "deep.cedar"))).toBe("HOOKBUS_CEDAR_TOO_DEEP");
  });

  it("ends the thread on a trap and on a blown budget; the next set gets a fresh one", async () => {
    const ended = loader.threadsEnded();
    // Straight at the thread, past the limits: what a trap there does.
    const ask = (loader as unknown as { ask: (t: string, s: string) => Promise<{ type: string }> })
      .ask;
    const deep = `forbid (principal, action, resource) when { ${"(".repeat(200)}true${")".repeat(200)} };`;
    expect((await ask.call(loader, deep, "deep.cedar")).type).toBe("trap");
    expect(loader.threadsEnded()).toBe(ended + 1);
    const hurried = new CedarSetLoader(1);
    expect(await codeOf(hurried.load(EXEC, "exec.cedar"))).toBe("HOOKBUS_CEDAR_LOAD_TIMEOUT");
    expect(hurried.threadsEnded()).toBe(1);
    await hurried.close();
    expect((await loader.load(EXEC, "exec.cedar")).policies.size).toBe(1);
  });
});
