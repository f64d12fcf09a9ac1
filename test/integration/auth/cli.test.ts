/**
 * `hookbus auth` as a user runs it: the configuration it writes is accepted by nats-server, keys
 * are kept across runs (adding a user changes no one else's), and a bad description is a coded
 * error naming the field.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import { findNatsServerBinary } from "../../../src/testing/nats.js";

const dir = mkdtempSync(join(tmpdir(), "hookbus-auth-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(args, {
    print: (line) => (out += `${line}\n`),
    error: (line) => (err += `${line}\n`),
  });
  return { code, out, err };
}

function describeTo(file: string, description: unknown): string {
  const path = join(dir, file);
  writeFileSync(path, JSON.stringify(description));
  return path;
}

interface Listed {
  users: { role: string; name: string; publicKey: string; keyFile: string; inboxPrefix: string }[];
}

describe("hookbus auth", () => {
  it("writes a configuration nats-server accepts, and seed files only their owner reads", async () => {
    const input = describeTo("a.json", {
      agents: ["support/bot.1"],
      policies: ["pii-guard"],
      coordinators: ["c1"],
      operators: ["ops"],
      auditors: ["audit"],
      sealers: ["sealer"],
      indexers: ["indexer"],
    });
    const conf = join(dir, "nats-auth.conf");
    const result = await run(["auth", input, "--out", conf, "--keys", join(dir, "keys"), "--json"]);
    expect(result.code).toBe(0);
    const listed = JSON.parse(result.out) as Listed;
    expect(listed.users.map((u) => `${u.role}:${u.inboxPrefix}`)).toEqual([
      "agent:_INBOX_hookbus.agent.support=2Fbot=2E1",
      "worker:_INBOX_hookbus.worker.pii-guard",
      "coordinator:_INBOX_hookbus.coordinator.c1",
      "operator:_INBOX_hookbus.operator.ops",
      "auditor:_INBOX_hookbus.auditor.audit",
      "sealer:_INBOX_hookbus.sealer.sealer",
      "indexer:_INBOX_hookbus.indexer.indexer",
    ]);
    for (const user of listed.users) {
      expect(statSync(user.keyFile).mode & 0o777).toBe(0o600);
      expect(readFileSync(conf, "utf8")).toContain(`nkey: "${user.publicKey}"`);
    }
    const server = join(dir, "server.conf");
    writeFileSync(server, `jetstream {}\ninclude "nats-auth.conf"\n`);
    const binary = findNatsServerBinary();
    if (binary === undefined)
      throw new Error("nats-server is needed (apt-get install nats-server)");
    const check = spawnSync(binary, ["-c", server, "-t"], { encoding: "utf8" });
    expect(`${check.stdout}${check.stderr}`).toMatch(/is valid/);
  });

  it("keeps every existing key when run again with one more agent", async () => {
    const keys = join(dir, "keys-2");
    const out = join(dir, "second.conf");
    const first = JSON.parse(
      (
        await run([
          "auth",
          describeTo("b.json", { agents: ["a1"] }),
          "--out",
          out,
          "--keys",
          keys,
          "--json",
        ])
      ).out,
    ) as Listed;
    const second = JSON.parse(
      (
        await run([
          "auth",
          describeTo("c.json", { agents: ["a1", "a2"] }),
          "--out",
          out,
          "--keys",
          keys,
          "--json",
        ])
      ).out,
    ) as Listed;
    expect(second.users[0]!.publicKey).toBe(first.users[0]!.publicKey);
    expect(second.users[1]!.publicKey).not.toBe(first.users[0]!.publicKey);
  });

  it("rejects a bad description with HOOKBUS_INVALID_AUTH naming the field", async () => {
    const bad = await run([
      "auth",
      describeTo("d.json", { agents: ["ok", "ok"] }),
      "--out",
      join(dir, "x.conf"),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^HOOKBUS_INVALID_AUTH: .*agents.*duplicate/);
    const unknown = await run(["auth", describeTo("e.json", { agnets: ["a"] })]);
    expect(unknown.err).toMatch(/^HOOKBUS_INVALID_AUTH: /);
    const policy = await run(["auth", describeTo("f.json", { policies: ["has.dot"] })]);
    expect(policy.err).toMatch(/^HOOKBUS_INVALID_AUTH: .*policies\.0/);
  });
});
