/**
 * The registry's own tool vocabulary (`toolVocabulary` in the registry document) reaches the
 * coordinator, on a real nats-server: under a registry that says `deploy` is a shell, a rule for
 * shells blocks `deploy` with `rm -rf /`, the session facts count it as
 * a shell call, and `hookbus stop tool class:shell` stops it; without the entry `deploy` is `unknown`
 * and passes. `hookbus replay` of a session recorded without the entry shows what it changes, and
 * `hookbus registry apply` refuses an unknown class with a coded error naming the entry.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookbusClient } from "../../../src/index.js";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";
import type { RegistryDocumentInput } from "../../../src/registry/document.js";
import { RegistryStore } from "../../../src/registry/store.js";
import type { ReplayResult } from "../../../src/replay/types.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";

const nats = useNatsServer();
const namespace = uniqueNamespace("cedar-vocabulary");

/**
 * A rule by class: the library's own destructive-shell rules read the facts of any tool that
 * holds a command whatever its class, so they would block `deploy` with or without the entry.
 */
const DESTRUCTIVE_SHELL = `
@id("shell-recursive-delete") @reason("recursive forced delete in a shell command")
forbid (principal, action in [Action::"after_llm_call", Action::"before_tool_call"], resource is Tool)
when { resource.class == "shell" && context has facts && context.facts.deletesRecursively };
`;
/** Reads the session facts: a message after any shell call is refused. */
const NO_SEND_AFTER_SHELL = `
@id("no-send-after-shell") @reason("the session ran a shell command")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "send-message" && context.session.classesCalled.contains("shell") };
`;

const WITHOUT: RegistryDocumentInput = {
  policies: [
    {
      name: "destructive-shell",
      kind: "cedar",
      cedar: DESTRUCTIVE_SHELL,
      hooks: ["after_llm_call", "before_tool_call"],
      priority: 100,
      failMode: "fail-closed",
    },
    {
      name: "no-send-after-shell",
      kind: "cedar",
      cedar: NO_SEND_AFTER_SHELL,
      hooks: ["before_tool_call"],
      priority: 90,
      failMode: "fail-closed",
    },
  ],
};
const WITH: RegistryDocumentInput = {
  ...WITHOUT,
  toolVocabulary: { names: { deploy: "shell" }, prefixes: { notify_: "send-message" } },
};

let store: RegistryStore;
let coordinator: Coordinator | undefined;
let client: HookbusClient | undefined;
let dir: string;

async function cli(...args: string[]) {
  const lines: string[] = [];
  const out: Output = { print: (l) => lines.push(l), error: (l) => lines.push(l) };
  const code = await main([...args, "--server", nats.url(), "--namespace", namespace], out);
  return { code, lines, text: lines.join("\n") };
}

/** Apply a registry and return its revision (the coordinator answers with the one it used). */
async function apply(document: RegistryDocumentInput): Promise<number> {
  return (await store.apply(document)).revision;
}

let ids = 0;
/** A before_tool_call decided under registry revision `revision` or later. */
async function toolCall(
  sessionKey: string,
  toolName: string,
  params: Record<string, unknown>,
  revision: number,
) {
  // Each call its own id; a reply from an older revision (the watch not there yet) is retried.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const callId = `${sessionKey}-${toolName}-${++ids}`;
    const result = await client!.call(
      "before_tool_call",
      { agentId: "vocab-agent", sessionKey, runId: "r", toolName, toolCallId: callId },
      { toolName, toolCallId: callId, params },
      { callId },
    );
    if ((result.registryRevision ?? 0) >= revision) return result;
    if (Date.now() > deadline) throw new Error(`registry revision ${revision} not in force`);
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hookbus-vocabulary-"));
  store = await RegistryStore.open(await nats.connect(), new Subjects(namespace));
  await apply(WITHOUT);
  coordinator = await startCoordinator({ nc: await nats.connect(), namespace, id: "c-vocab" });
  client = await HookbusClient.connect({ nc: await nats.connect(), namespace, timeoutMs: 20_000 });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await coordinator?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("a registry's tool vocabulary at the coordinator", () => {
  it("without the entry, deploy is `unknown`: the shell rules do not see it", async () => {
    const revision = await apply(WITHOUT);
    const rm = await toolCall("s-without", "deploy", { command: "rm -rf /" }, revision);
    expect(rm.decision).toMatchObject({ outcome: "allow" });
    const send = await toolCall("s-without", "notify_ops", { text: "done" }, revision);
    expect(send.decision).toMatchObject({ outcome: "allow" });
  });

  it("with `deploy: shell`, the shell rule blocks it, and the session counts a shell call", async () => {
    const revision = await apply(WITH);
    const rm = await toolCall("s-with", "deploy", { command: "rm -rf /" }, revision);
    expect(rm.decision).toMatchObject({
      outcome: "block",
      blockReason:
        "recursive forced delete in a shell command (Cedar policy shell-recursive-delete)",
    });
    // A harmless deploy passes, and teaches the session that a shell ran.
    const ls = await toolCall("s-with", "deploy", { command: "ls" }, revision);
    expect(ls.decision.outcome).toBe("allow");
    // notify_ops is send-message by the registry's prefix: refused after the shell call.
    const send = await toolCall("s-with", "notify_ops", { text: "done" }, revision);
    expect(send.decision).toMatchObject({
      outcome: "block",
      blockReason: "the session ran a shell command (Cedar policy no-send-after-shell)",
    });
  });

  it("`hookbus stop tool class:shell` stops deploy under the registry that says it is a shell", async () => {
    const withRevision = await apply(WITH);
    const stop = await cli("stop", "tool", "class:shell", "--by", "alice", "--reason", "drill");
    try {
      expect(stop.code).toBe(0);
      const stopped = await toolCall("s-stop", "deploy", { command: "ls" }, withRevision);
      expect(stopped.decision).toMatchObject({ outcome: "block" });
      expect(String((stopped.decision as { blockReason?: string }).blockReason)).toMatch(
        /^emergency stop: tool class:shell stopped by alice/,
      );
      // The same stop, under a revision without the entry: deploy is `unknown` again.
      const withoutRevision = await apply(WITHOUT);
      const passes = await toolCall("s-stop", "deploy", { command: "ls" }, withoutRevision);
      expect(passes.decision.outcome).toBe("allow");
    } finally {
      expect((await cli("resume", "tool", "class:shell", "--by", "alice")).code).toBe(0);
    }
  });
});

describe("hookbus replay under a registry that adds the vocabulary", () => {
  it("shows the recorded deploy call that would now be blocked", async () => {
    const revision = await apply(WITHOUT);
    const recorded = await toolCall("s-replay", "deploy", { command: "rm -rf /tmp/x" }, revision);
    expect(recorded.decision.outcome).toBe("allow");
    const registry = join(dir, "with.json");
    await writeFile(registry, JSON.stringify(WITH));
    const withoutFile = join(dir, "without.json");
    await writeFile(withoutFile, JSON.stringify(WITHOUT));

    const same = await cli("replay", "--registry", withoutFile, "--session", "s-replay", "--json");
    expect(same.code).toBe(0);
    const unchanged = same.lines.slice(0, -1).map((l) => JSON.parse(l) as ReplayResult);
    expect(unchanged.map((r) => r.status)).toEqual(["unchanged"]);

    const changed = await cli("replay", "--registry", registry, "--session", "s-replay");
    expect(changed.code).toBe(0);
    expect(changed.lines.filter((l) => l.startsWith("changed"))).toEqual([
      expect.stringMatching(
        /^changed .* s-replay-deploy-\d+\s+before_tool_call deploy: allow → block by `destructive-shell`$/,
      ),
    ]);
  });
});

describe("hookbus policy test --registry", () => {
  it("classifies with the registry file's vocabulary: what is tested is what runs", async () => {
    const fixture = join(dir, "deploy.policy-test.json");
    await writeFile(
      fixture,
      JSON.stringify({
        context: { agentId: "vocab-test" },
        cases: [
          {
            name: "deploy rm -rf is blocked",
            hook: "before_tool_call",
            event: { toolName: "deploy", toolCallId: "t1", params: { command: "rm -rf /" } },
            expect: { outcome: "block", blockedBy: "destructive-shell" },
          },
        ],
      }),
    );
    const withFile = join(dir, "test-with.json");
    await writeFile(withFile, JSON.stringify(WITH));
    const withoutFile = join(dir, "test-without.json");
    await writeFile(withoutFile, JSON.stringify(WITHOUT));

    const passes = await cli("policy", "test", fixture, "--registry", withFile);
    expect(passes.text).toContain("1 cases: 1 passed, 0 failed");
    expect(passes.code).toBe(0);
    const fails = await cli("policy", "test", fixture, "--registry", withoutFile);
    expect(fails.text).toContain('outcome: expected "block", got "allow"');
    expect(fails.code).toBe(1);
  });
});

describe("hookbus registry apply", () => {
  it("refuses an unknown class with HOOKBUS_INVALID_REGISTRY naming the entry, and stores nothing", async () => {
    const before = (await store.current()).revision;
    const file = join(dir, "bad.json");
    await writeFile(
      file,
      JSON.stringify({ ...WITHOUT, toolVocabulary: { names: { deploy: "shel" } } }),
    );
    const result = await cli("registry", "apply", file);
    expect(result.code).toBe(1);
    expect(result.text).toContain("HOOKBUS_INVALID_REGISTRY");
    expect(result.text).toContain('toolVocabulary.names.deploy: unknown tool class "shel"');
    expect((await store.current()).revision).toBe(before);
  });
});
