/**
 * Cedar sets written to break the coordinator's engine (issue 31, item 3), on a real nats-server
 * with a real coordinator: `registry apply` refuses each with a coded error (never
 * HOOKBUS_INTERNAL), and the same set stored by other means (straight into the registry bucket)
 * fails by its own failure mode at load, while every other set of the registry goes on deciding
 * exactly as before.
 */
import fc from "fast-check";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookbusClient } from "../../../src/index.js";
import { registryCommand } from "../../../src/cli/commands/registry.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import type { RegistryDocumentInput } from "../../../src/registry/document.js";
import { applyRegistry } from "../faults/harness.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const dir = mkdtempSync(join(tmpdir(), "hookbus-hostile-cedar-"));
const namespace = uniqueNamespace("hostile");
let coordinator: Coordinator;
let client: HookbusClient;

beforeAll(async () => {
  await applyRegistry(await nats.connect(), namespace, registry(undefined));
  coordinator = await startCoordinator({ nc: await nats.connect(), namespace, id: "c-hostile" });
  client = await HookbusClient.connect({ nc: await nats.connect(), namespace, timeoutMs: 8000 });
}, 60_000);

afterAll(async () => {
  await client.close();
  await coordinator.stop();
});

/** The unrelated sets: one that blocks (fail-closed), one that forbids but fails open. */
const GUARD = `@id("no-exec") @reason("exec is blocked")
forbid (principal, action == Action::"before_tool_call", resource == Tool::"exec");`;
const OPEN = `@id("no-wire") @reason("no money moves")
forbid (principal, action == Action::"before_tool_call", resource == Tool::"wire_money");`;

function entry(
  name: string,
  cedar: string,
  failMode: "fail-open" | "fail-closed",
  priority: number,
) {
  return { name, kind: "cedar" as const, cedar, hooks: ["before_tool_call"], priority, failMode };
}

function registry(hostile: string | undefined): RegistryDocumentInput {
  const policies = [entry("guard", GUARD, "fail-closed", 100)];
  if (hostile !== undefined) policies.push(entry("hostile", hostile, "fail-open", 90));
  policies.push(entry("open", OPEN, "fail-open", 10));
  return { policies };
}

const REFUSALS = [
  "HOOKBUS_CEDAR_TOO_DEEP",
  "HOOKBUS_CEDAR_TOO_MANY_TERMS",
  "HOOKBUS_CEDAR_TOO_MANY_RULES",
  "HOOKBUS_CEDAR_TOO_LARGE",
  "HOOKBUS_INVALID_CEDAR",
  "HOOKBUS_INVALID_REGISTRY",
];

/** `hookbus registry apply FILE`, in process: the exit code, or the coded error it threw. */
async function registryApply(document: RegistryDocumentInput): Promise<string> {
  const file = join(dir, `registry-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(document));
  const argv = ["apply", file, "--server", nats.url(), "--namespace", namespace, "--wait-ms", "0"];
  const out = { print: () => undefined, error: () => undefined };
  try {
    return `exit ${await registryCommand.run(argv, out)}`;
  } catch (error) {
    return isHookbusError(error) ? error.code : `uncoded: ${String(error)}`;
  }
}

/** Stores the document without `registry apply`'s checks and waits until it is in force. */
async function storeDirectly(document: RegistryDocumentInput): Promise<void> {
  const bus = await applyRegistry(await nats.connect(), namespace, document);
  const { RegistryStore } = await import("../../../src/registry/store.js");
  const stored = (await (await RegistryStore.open(bus.nc, bus.subjects)).current()).revision;
  await until(() => coordinator.registry().revision >= stored, 30_000, "the revision in force");
  await bus.nc.close();
}

let call = 0;
async function decide(toolName: string) {
  call++;
  return client.decide(
    "before_tool_call",
    { agentId: "agent-h", sessionKey: "s-h", runId: `r-${call}` },
    { toolName, toolCallId: `t-${call}`, params: { command: "ls" } },
  );
}

async function expectUnrelatedSetsDecide(): Promise<void> {
  expect(await decide("exec")).toMatchObject({
    outcome: "block",
    blockReason: "exec is blocked (Cedar policy no-exec)",
  });
  expect(await decide("wire_money")).toMatchObject({
    outcome: "block",
    blockReason: "no money moves (Cedar policy no-wire)",
  });
  expect((await decide("read_file")).outcome).toBe("allow");
}

const rule = (condition: string) =>
  `forbid (principal, action == Action::"before_tool_call", resource is Tool) when { ${condition} };`;
const chain = (terms: number, op: string) =>
  Array.from({ length: terms }, (_, i) => `resource.name == "zz${i}"`).join(` ${op} `);

/** Deep, long and wide sets; none forbids a tool the checks above call. */
const hostileSet = fc.oneof(
  fc
    .integer({ min: 1, max: 400 })
    .map((d) => rule(`${"(".repeat(d)}resource.name == "zz"${")".repeat(d)}`)),
  fc
    .integer({ min: 1, max: 300 })
    .map((d) => rule(`${"[".repeat(d)}"zz"${"]".repeat(d)} == resource.name`)),
  fc
    .integer({ min: 1, max: 200 })
    .map((d) => rule(`${"{a: ".repeat(d)}1${"}".repeat(d)} == {b: 1}`)),
  fc
    .tuple(fc.integer({ min: 1, max: 700 }), fc.constantFrom("||", "&&"))
    .map(([n, op]) => rule(chain(n, op))),
  fc
    .tuple(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 60 }))
    .map(([d, n]) => rule(`${"(".repeat(d)}${chain(n, "||")}${")".repeat(d)}`)),
  fc
    .integer({ min: 1, max: 1500 })
    .map((n) => Array.from({ length: n }, (_, i) => rule(`resource.name == "zz${i}"`)).join("\n")),
);

describe("Cedar sets that try to break the engine", { timeout: 300_000 }, () => {
  it("the reported attack: deep parentheses, then a valid fail-open set, still blocks exec", async () => {
    const deep = rule(`${"(".repeat(100)}resource.name == "zz"${")".repeat(100)}`);
    const document = registry(deep);
    document.policies[2] = entry("open", GUARD.replace("no-exec", "no-exec-open"), "fail-open", 10);
    expect(await registryApply(document)).toBe("HOOKBUS_CEDAR_TOO_DEEP");
    await storeDirectly(document);
    const exec = await decide("exec");
    expect(exec).toMatchObject({ outcome: "block" });
    // And with the fail-closed guard gone, the fail-open set alone still decides it.
    document.policies.shift();
    await storeDirectly(document);
    expect(await decide("exec")).toMatchObject({
      outcome: "block",
      blockReason: "exec is blocked (Cedar policy no-exec-open)",
    });
    await storeDirectly(registry(rule(chain(500, "||"))));
    await expectUnrelatedSetsDecide();
  });

  it("no generated deep or wide set makes apply fail uncoded or changes another set's decisions", async () => {
    await fc.assert(
      fc.asyncProperty(hostileSet, async (hostile) => {
        const applied = await registryApply(registry(hostile));
        expect(applied === "exit 0" || REFUSALS.includes(applied), applied).toBe(true);
        await storeDirectly(registry(hostile));
        await expectUnrelatedSetsDecide();
      }),
      { numRuns: 12 },
    );
  });
});
