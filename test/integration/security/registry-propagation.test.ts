/**
 * Issue 21, finding 1 and item 3: a registry change confirms its enforcement. With every
 * coordinator's registry watch consumer deleted (what any agent could do before), two coordinators
 * still put a new revision in force within a second, and `hookbus registry apply` waits until
 * both report it and says how long it took; a coordinator that cannot follow is named (exit 1).
 */
import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { discover } from "../../../src/observability/discovery.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";

const nats = useNatsServer();
const running: Coordinator[] = [];
afterAll(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

const dir = mkdtempSync(join(tmpdir(), "hookbus-propagation-"));
function registryFile(priority: number): string {
  const file = join(dir, `registry-${priority}.json`);
  const policies = [{ name: "guard", hooks: ["before_tool_call"], priority }];
  writeFileSync(file, JSON.stringify({ policies }));
  return file;
}

async function apply(namespace: string, file: string, ...args: string[]) {
  const lines: string[] = [];
  const out: Output = { print: (l) => lines.push(l), error: (l) => lines.push(l) };
  const code = await main(
    ["registry", "apply", file, ...args, "--server", nats.url(), "--namespace", namespace],
    out,
  );
  return { code, text: lines.join("\n") };
}

describe("registry changes that confirm their enforcement", () => {
  it("two coordinators whose watches were deleted enforce a new revision within 1 s, confirmed by apply", async () => {
    const namespace = uniqueNamespace("propagate");
    const subjects = new Subjects(namespace);
    const nc = await nats.connect();
    await (await RegistryStore.open(nc, subjects)).apply(JSON.parse('{"policies":[]}'));
    for (const id of ["c1", "c2"])
      running.push(await startCoordinator({ nc: await nats.connect(id), namespace, id }));
    // The attack of finding 1: delete every consumer on the registry stream.
    const jsm = await jetstreamManager(nc);
    const stream = `KV_${subjects.registryBucket}`;
    let deleted = 0;
    for await (const consumer of jsm.consumers.list(stream)) {
      await jsm.consumers.delete(stream, consumer.name);
      deleted++;
    }
    expect(deleted).toBeGreaterThanOrEqual(2);

    const result = await apply(namespace, registryFile(10), "--wait-ms", "3000");
    expect(result.text).toMatch(/enforced by 2 coordinator\(s\) in \d+ ms/);
    expect(result.code).toBe(0);
    const ms = Number(/in (\d+) ms/.exec(result.text)?.[1]);
    expect(ms).toBeLessThanOrEqual(1000);
    console.log(`registry propagation with deleted watches: ${ms} ms`);
  });

  it("names a coordinator that does not report the new revision, and exits 1", async () => {
    const namespace = uniqueNamespace("laggard");
    const subjects = new Subjects(namespace);
    const nc = await nats.connect();
    await (await RegistryStore.open(nc, subjects)).apply(JSON.parse('{"policies":[]}'));
    running.push(await startCoordinator({ nc: await nats.connect("c1"), namespace, id: "c1" }));
    // A coordinator stuck on the old revision: it answers discovery as c1 does, but as "frozen"
    // and with the revision c1 had before the apply.
    const [real] = (await discover(nc, namespace, { role: "coordinator" })).replies;
    const stale = JSON.stringify({ ...real, id: "frozen" });
    const fake = await nats.connect("frozen");
    for (const subject of [`${namespace}.discover`, `${namespace}.discover.coordinator`])
      fake.subscribe(subject, {
        callback: (_, msg) => {
          msg.respond(stale);
        },
      });
    await fake.flush();

    const result = await apply(namespace, registryFile(20), "--wait-ms", "800");
    expect(result.code).toBe(1);
    expect(result.text).toMatch(
      /NOT ENFORCED after \d+ ms by 1 of 2 coordinator\(s\): frozen \(revision 1, still enforcing it: the change is loading, or failed to load \(hookbus status says which\)\)/,
    );
  });
});
