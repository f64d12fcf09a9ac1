/**
 * Every program in examples/ (the README's samples) runs as it is, through tsx, against a private
 * nats-server: the policy module has no side effects on import, the policy program serves it and
 * stops on SIGTERM, the agent loop's exec call is blocked by it, the merge sample prints its
 * decision. In the checkout "hookbus" resolves to the sources (tsconfig.json "paths").
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import { startChild } from "../../support/child.js";
import { startNoShell } from "./no-shell-setup.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";

const example = (file: string) =>
  fileURLToPath(new URL(`../../../examples/${file}`, import.meta.url));
const nats = useNatsServer();
const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));

describe("examples/", () => {
  it("merge-library.ts prints the merged decision", async () => {
    const run = startChild(["--import", "tsx", example("merge-library.ts")], {});
    expect(await run.exited, run.errors()).toBe(0);
    expect(JSON.parse(run.output())).toEqual({
      outcome: "block",
      blockReason: "no shell",
      blockedBy: "no-shell",
      decidedBy: { block: ["no-shell"] },
    });
  }, 60_000);

  it("no-shell-policy.ts does nothing when imported: it exits at once and prints nothing", async () => {
    const run = startChild(["--import", "tsx", example("no-shell-policy.ts")], {});
    expect(await run.exited, run.errors()).toBe(0);
    expect(run.output()).toBe("");
  }, 60_000);

  it("no-email-after-web-policy.ts does nothing when imported", async () => {
    const run = startChild(["--import", "tsx", example("no-email-after-web-policy.ts")], {});
    expect(await run.exited, run.errors()).toBe(0);
    expect(run.output()).toBe("");
  }, 60_000);

  it("invoke-policy.ts allows email.send until the session has fetched from the web", async () => {
    const run = startChild(["--import", "tsx", example("invoke-policy.ts")], {});
    expect(await run.exited, run.errors()).toBe(0);
    expect(
      run
        .output()
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      { status: "ok", verdict: null },
      {
        status: "ok",
        verdict: { block: true, blockReason: "session read untrusted web content" },
      },
    ]);
  }, 60_000);

  it("run-policy.ts serves no-shell, agent-loop.ts is blocked by it, and SIGTERM stops the policy", async () => {
    const { env, policy, coordinator } = await startNoShell(
      await nats.connect(),
      nats.url(),
      "examples",
    );
    try {
      const agent = startChild(["--import", "tsx", example("agent-loop.ts")], env);
      expect(await agent.exited, agent.errors()).toBe(0);
      expect(agent.output().split("\n")).toEqual([
        "tools offered to the model: read_file",
        "read_file: ran read_file",
        "exec: blocked by no-shell: shell access is not allowed",
        "",
      ]);
      policy.child.kill("SIGTERM");
      expect(await policy.exited, policy.errors()).toBe(0);
    } finally {
      if (policy.child.exitCode === null) policy.child.kill("SIGKILL");
      await coordinator.stop();
    }
  }, 90_000);

  it("approval-flow.ts waits for a person; `hookbus approvals list` shows it and `approve` lets it run", async () => {
    const nc = await nats.connect();
    const namespace = uniqueNamespace("examples");
    const env = { NATS_URL: nats.url(), HOOKBUS_NAMESPACE: namespace };
    const coordinator = await startCoordinator({ nc, namespace });
    await (
      await RegistryStore.open(nc, new Subjects(namespace))
    ).apply(JSON.parse(readFileSync(example("approval-registry.json"), "utf8")));
    await until(() => coordinator.registry().revision > 0, 5_000, "registry at the coordinator");
    const agent = startChild(["--import", "tsx", example("approval-flow.ts")], env);
    try {
      const id = await until(
        () => /pending approval (a[0-9a-f]{31})/.exec(agent.output())?.[1],
        30_000,
        `the pending request (stderr: ${agent.errors()})`,
      );
      const flags = ["--server", nats.url(), "--namespace", namespace];
      const list = startChild([cli, "approvals", "list", "--json", ...flags], {});
      expect(await list.exited, list.errors()).toBe(0);
      // --json: one record per line.
      const listed = list
        .output()
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { id: string }).id);
      expect(listed).toEqual([id]);
      const approve = startChild(
        [
          cli,
          "approvals",
          "approve",
          id,
          "--as",
          "alice",
          "--reason",
          "expected invoice",
          ...flags,
        ],
        {},
      );
      expect(await approve.exited, approve.errors()).toBe(0);
      expect(approve.output()).toMatch(/approved \(record #\d+\)/);
      expect(await agent.exited, agent.errors()).toBe(0);
      expect(agent.output()).toContain(
        'approved by alice: wiring {"amount":1200,"currency":"EUR","to":"ACME GmbH"}',
      );
    } finally {
      if (agent.child.exitCode === null) agent.child.kill("SIGKILL");
      await coordinator.stop();
    }
  }, 120_000);
});
