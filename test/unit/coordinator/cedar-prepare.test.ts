/**
 * A revision's Cedar sets are parsed when the revision comes into force (CedarEvaluator.prepare,
 * called by the coordinator's registry watch, in the load thread), never on a call: parsing costs the engine tens to
 * hundreds of milliseconds per set, and a call running under an older revision must not make the
 * sets in force be parsed again.
 */
import { describe, expect, it } from "vitest";
import { CedarSetLoader } from "../../../src/cedar/loader.js";
import { MemorySessionFactStore } from "../../../src/cedar/session-facts.js";
import { cedarWasm } from "../../../src/cedar/wasm.js";
import { CedarEvaluator, type CedarCall } from "../../../src/coordinator/cedar-evaluator.js";
import { parseRegistryDocument, type RegistryPolicy } from "../../../src/registry/document.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";

const NO_RM =
  '@id("no-rm") forbid (principal, action == Action::"before_tool_call", resource is Tool);';
const NO_SEND =
  '@id("no-send") forbid (principal, action == Action::"before_tool_call", resource);';
const ILL_TYPED =
  '@id("typo") forbid (principal, action == Action::"before_tool_call", resource) when { context.nonexistent == 1 };';

function snapshot(revision: number, sets: Record<string, string>): RegistrySnapshot {
  const policies = Object.entries(sets).map(([name, cedar], i) => ({
    name,
    kind: "cedar",
    cedar,
    hooks: ["before_tool_call"],
    priority: 10 - i,
  }));
  return new RegistrySnapshot(revision, parseRegistryDocument({ policies }));
}

function cedarOf(s: RegistrySnapshot): (RegistryPolicy & { cedar: string })[] {
  return s.document.policies.filter((p): p is RegistryPolicy & { cedar: string } => !!p.cedar);
}

const call: CedarCall = {
  hook: "before_tool_call",
  context: { agentId: "a", sessionKey: "s", runId: "r" },
  event: { toolName: "exec", params: { cmd: "ls" } },
  agentId: "a",
  sessionKey: "s",
};

describe("Cedar sets are prepared with their revision", () => {
  it("parses every set once, keeps a set that fails as its error, and a call parses nothing", async () => {
    const cedar = new CedarEvaluator(new MemorySessionFactStore());
    const rev1 = snapshot(1, { rm: NO_RM, typo: ILL_TYPED });
    expect(await cedar.prepare(rev1)).toMatchObject({ loaded: 2, failed: ["typo"] });

    const outcomes = await cedar.evaluate(cedarOf(rev1), call, rev1);
    expect(outcomes.map((o) => [o.policy, o.status])).toEqual([
      ["rm", "ok"],
      ["typo", "error"],
    ]);
    expect((await cedar.prepare(rev1)).loaded).toBe(0);
    await cedar.close();
  });

  it("a call under an older revision does not make the sets in force be parsed again", async () => {
    const cedar = new CedarEvaluator(new MemorySessionFactStore());
    const rev1 = snapshot(1, { rm: NO_RM });
    const rev2 = snapshot(2, { send: NO_SEND });
    await cedar.prepare(rev1);
    expect(await cedar.prepare(rev2)).toMatchObject({ loaded: 1, failed: [] });

    await cedar.evaluate(cedarOf(rev1), call, rev1); // still running under revision 1
    expect((await cedar.prepare(rev2)).loaded).toBe(0);
    // A newer revision forgets what it no longer uses (bounded by the registry).
    await cedar.prepare(snapshot(3, { send: NO_SEND }));
    expect((await cedar.prepare(snapshot(4, { rm: NO_RM }))).loaded).toBe(1);
    await cedar.close();
  });

  it("a set over a limit or past the load budget answers its own code; its failure mode decides", async () => {
    const deep = `forbid (principal, action, resource) when { ${"(".repeat(40)}true${")".repeat(40)} };`;
    const cedar = new CedarEvaluator(new MemorySessionFactStore());
    const rev = snapshot(1, { rm: NO_RM, deep });
    expect(await cedar.prepare(rev)).toMatchObject({ failed: ["deep"] });
    const outcomes = await cedar.evaluate(cedarOf(rev), call, rev);
    expect(outcomes.map((o) => [o.policy, o.status, o.error?.code])).toEqual([
      ["rm", "ok", undefined],
      ["deep", "error", "HOOKBUS_CEDAR_TOO_DEEP"],
    ]);
    await cedar.close();

    const hurried = new CedarEvaluator(new MemorySessionFactStore(), new CedarSetLoader(1));
    const slow = snapshot(1, { rm: NO_RM });
    expect(await hurried.prepare(slow)).toMatchObject({ failed: ["rm"] });
    const [outcome] = await hurried.evaluate(cedarOf(slow), call, slow);
    expect(outcome?.error?.code).toBe("HOOKBUS_CEDAR_LOAD_TIMEOUT");
    await hurried.close();
  });

  it("pre-parses every sub-set of the set's hooks with the revision: no call pre-parses one", async () => {
    // Arithmetic is left to the engine (direct.ts), so these calls reach the engine's sub-sets.
    const scoped = `@id("exec") forbid (principal, action == Action::"before_tool_call", resource == Tool::"exec") when { context.session.toolCalls + 1 > 0 };
@id("shell") forbid (principal, action == Action::"before_tool_call", resource is Tool) when { resource.class == "shell" && context.session.toolCalls + 1 > 1000 };`;
    const cedar = new CedarEvaluator(new MemorySessionFactStore());
    const rev = snapshot(1, { scoped });
    expect(await cedar.prepare(rev)).toMatchObject({ loaded: 1, failed: [] });
    const parsed: string[] = [];
    const preparse = cedarWasm.preparsePolicySet;
    cedarWasm.preparsePolicySet = (id, policies) => {
      parsed.push(id);
      return preparse(id, policies);
    };
    try {
      for (const [toolName, blocked] of [
        ["exec", true],
        ["read_file", undefined],
        ["Bash", undefined],
      ] as const) {
        const [outcome] = await cedar.evaluate(
          cedarOf(rev),
          { ...call, event: { toolName, params: { cmd: `ls ${toolName}` } } },
          rev,
        );
        expect(
          [outcome?.status, (outcome?.verdict as { block?: boolean } | undefined)?.block],
          toolName,
        ).toEqual(["ok", blocked]);
      }
    } finally {
      cedarWasm.preparsePolicySet = preparse;
    }
    expect(parsed).toEqual([]);
    await cedar.close();
  });
});
