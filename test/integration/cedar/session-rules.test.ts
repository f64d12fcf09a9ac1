/**
 * The session rules of docs/example-policies.md ("Session rules in Cedar"), each ONE Cedar policy,
 * through the real engine on a real coordinator and NATS server: block after three refusals,
 * approval after 20 shell calls in five minutes, and a person's denial remembered by the session.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { HookbusClient, type Bus } from "../../../src/index.js";
import { answerApproval } from "../../../src/approvals/client.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { applyRegistry } from "../faults/harness.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";

const nats = useNatsServer();

/** The ```cedar block under the docs heading `heading`: the text tested is the text shown. */
function documented(heading: string): string {
  const doc = readFileSync(new URL("../../../docs/example-policies.md", import.meta.url), "utf8");
  const at = doc.indexOf(`### ${heading}`);
  if (at === -1) throw new Error(`no "### ${heading}" in docs/example-policies.md`);
  const block = /```cedar\n([\s\S]*?)```/.exec(doc.slice(at));
  if (block === null) throw new Error(`no cedar block under "${heading}"`);
  return block[1]!;
}

/** Another rule that refuses: the refusals the session rules count. */
const NO_RM = `@id("no-rm") @reason("no rm")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { context.call has command && context.call.command like "rm *" };`;

const DENIED_THEN_NO_SEND = `@id("no-send-after-denial") @reason("a person denied a call of this session")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "send-message" && context.session.approvalsDenied >= 1 };`;

let coordinator: Coordinator | undefined;
let client: HookbusClient | undefined;

afterEach(async () => {
  await client?.close();
  await coordinator?.stop();
  client = undefined;
  coordinator = undefined;
});

async function start(rules: Record<string, string>): Promise<{ bus: Bus; namespace: string }> {
  const namespace = uniqueNamespace("cedar-rules");
  const bus = await applyRegistry(await nats.connect(), namespace, {
    policies: Object.entries(rules).map(([name, cedar], i) => ({
      name,
      kind: "cedar",
      cedar,
      hooks: ["before_tool_call"],
      priority: 10 + i,
      failMode: "fail-closed",
    })),
  });
  coordinator = await startCoordinator({ nc: await nats.connect(), namespace, id: "c-rules" });
  client = await HookbusClient.connect({ nc: await nats.connect(), namespace, timeoutMs: 8000 });
  return { bus, namespace };
}

const ctx = (sessionKey: string) => ({ agentId: "agent-rules", sessionKey, runId: "r-1" });
let n = 0;
const shell = (command: string) => ({
  toolName: "Bash",
  toolCallId: `t-${++n}`,
  params: { command },
});

describe("session rules, one Cedar policy each", () => {
  it("blocks once this session has had 3 refusals, whoever refused", async () => {
    await start({ "no-rm": NO_RM, "three-refusals": documented("Block after 3 refusals") });
    const decide = async (sessionKey: string, command: string) =>
      (await client!.decide("before_tool_call", ctx(sessionKey), shell(command))).outcome;

    expect(await decide("s-1", "rm -rf /tmp/a")).toBe("block");
    expect(await decide("s-1", "rm -rf /tmp/b")).toBe("block");
    // Two refusals: a call that is normally allowed still passes.
    expect(await decide("s-1", "ls")).toBe("allow");
    expect(await decide("s-1", "rm -rf /tmp/c")).toBe("block");
    // The third refusal: now even `ls` is blocked, by the session rule.
    const next = await client!.decide("before_tool_call", ctx("s-1"), shell("ls"));
    expect(next).toMatchObject({ outcome: "block", blockedBy: "three-refusals" });
    // Its own refusal counts too: the session stays blocked.
    expect(await decide("s-1", "pwd")).toBe("block");
    // Another session of the same agent starts with no refusals.
    expect(await decide("s-2", "ls")).toBe("allow");
  });

  it("counts a re-sent call once: its answer is the recorded one, and it teaches nothing more", async () => {
    await start({ "no-rm": NO_RM, "three-refusals": documented("Block after 3 refusals") });
    const rm = shell("rm -rf /tmp/a");
    for (let i = 0; i < 3; i++) {
      const again = await client!.decide("before_tool_call", ctx("s-resent"), rm, {
        callId: "resent-1",
      });
      expect(again).toMatchObject({ outcome: "block", blockedBy: "no-rm" });
    }
    // One refusal, not three: a call that is normally allowed passes.
    const ls = await client!.decide("before_tool_call", ctx("s-resent"), shell("ls"));
    expect(ls.outcome).toBe("allow");
  });

  it("asks a person after 20 shell calls in 5 minutes; the denial is a session fact", async () => {
    const { bus, namespace } = await start({
      "shell-burst": documented("Approval after 20 shell calls in 5 minutes"),
      "no-send-after-denial": DENIED_THEN_NO_SEND,
    });
    for (let i = 0; i < 20; i++) {
      const outcome = (await client!.decide("before_tool_call", ctx("s-burst"), shell("ls")))
        .outcome;
      expect({ i, outcome }).toEqual({ i, outcome: "allow" });
    }
    // A mail before the denial passes.
    const mail = (id: string) => ({
      toolName: "send_email",
      toolCallId: id,
      params: { to: "a@b.c" },
    });
    expect((await client!.decide("before_tool_call", ctx("s-burst"), mail("m-1"))).outcome).toBe(
      "allow",
    );
    // The 21st shell call waits for a person, who denies it.
    const held = await client!.decide("before_tool_call", ctx("s-burst"), shell("ls"), {
      onApproval: (report) =>
        void answerApproval(
          bus.nc,
          { id: report.id, decision: "deny", from: "test", reason: "too many" },
          { namespace, approver: "alice" },
        ),
    });
    expect(held).toMatchObject({ outcome: "block", resolvedApproval: { resolution: "denied" } });
    // The coordinator learnt the denial from the settlement: the session may not send any more.
    const after = await client!.decide("before_tool_call", ctx("s-burst"), mail("m-2"));
    expect(after).toMatchObject({ outcome: "block", blockedBy: "no-send-after-denial" });
  });
});
