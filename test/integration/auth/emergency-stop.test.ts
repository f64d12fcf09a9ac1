/**
 * Issue 21, item 4: only the operator role may write the emergency stop list. With the users
 * `hookbus auth` generates, on a real nats-server: the operator stops and resumes (through the
 * CLI, with its nkey), every other role that can reach the registry bucket is refused by the
 * server itself when it writes the `stops` key, and the agent and auditor can still read it.
 */
import { describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { StopStore } from "../../../src/registry/stops.js";
import type { AuthRole } from "../../../src/auth/description.js";
import { uniqueNamespace } from "../../support/nats.js";
import { requestDenied, useAuthServer } from "./harness.js";

const ns = uniqueNamespace("estopauth");
const s = new Subjects(ns);
const server = useAuthServer({
  namespace: ns,
  agents: ["agent-a"],
  policies: ["p1"],
  coordinators: ["c1"],
  operators: ["ops"],
  auditors: ["aud"],
  sealers: ["seal1"],
  indexers: ["idx1"],
});

async function asOperator(...args: string[]) {
  const ops = server.generated().users.find((u) => u.role === "operator")!;
  const lines: string[] = [];
  const out: Output = { print: (l) => lines.push(l), error: (l) => lines.push(l) };
  const code = await main(
    [
      ...args,
      "--server",
      server.url(),
      "--namespace",
      ns,
      "--nkey",
      ops.keyFile,
      "--inbox-prefix",
      ops.inboxPrefix,
      "--wait-ms",
      "0",
    ],
    out,
  );
  return { code, text: lines.join("\n") };
}

const OTHERS: [AuthRole, string][] = [
  ["agent", "agent-a"],
  ["worker", "p1"],
  ["coordinator", "c1"],
  ["auditor", "aud"],
  ["sealer", "seal1"],
  ["indexer", "idx1"],
];

describe("who may write the emergency stop list", () => {
  it("the operator stops and resumes; every other role is refused by the server", async () => {
    const stopped = await asOperator("stop", "tool", "exec", "--reason", "drill");
    expect(stopped.text).toContain("stopped tool exec");
    expect(stopped.code).toBe(0);

    const forged = JSON.stringify({ stops: [] });
    for (const [role, name] of OTHERS)
      await requestDenied(await server.as(role, name), `$KV.${s.registryBucket}.stops`, forged);

    // Readers of the registry still read it (the fast path and hookbus status depend on it).
    for (const [role, name] of [
      ["agent", "agent-a"],
      ["auditor", "aud"],
    ] as const) {
      const list = await (await StopStore.open(await server.as(role, name), s)).current();
      expect(list.stops.map((stop) => stop.name)).toEqual(["exec"]);
    }
    expect((await asOperator("resume", "tool", "exec")).code).toBe(0);
  });
});
