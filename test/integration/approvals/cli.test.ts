/**
 * `hookbus approvals` in process (the CLI's main with a captured output), on a real nats-server:
 * show prints what the approver decides on, deny settles it, a second answer is a coded error,
 * and list --all --json shows the settled request.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalProgress } from "../../../src/index.js";
import { main } from "../../../src/cli/main.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { ctx, startPipeline, toolEvent, type Pipeline } from "./harness.js";

const nats = useNatsServer();
let pipeline: Pipeline | undefined;

afterEach(async () => {
  await pipeline?.client.close();
  await pipeline?.coordinator?.stop();
  await pipeline?.runner.stop();
  pipeline = undefined;
});

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { print: (l) => out.push(l), error: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("hookbus approvals", () => {
  it("show, deny with a reason, a refused second answer, and list --all --json", async () => {
    const namespace = uniqueNamespace("apc");
    pipeline = await startPipeline(() => nats.connect(), namespace);
    const progress: ApprovalProgress[] = [];
    const result = pipeline.client.call("before_tool_call", ctx("cli-1"), toolEvent("cli-1"), {
      callId: "cli-1",
      onApproval: (p) => progress.push(p),
    });
    result.catch(() => {});
    const { id } = await until(() => progress[0], 15_000, "pending");
    const flags = ["--server", nats.url(), "--namespace", namespace];

    const shown = await cli(["approvals", "show", id, ...flags]);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain("title:       run shell");
    expect(shown.out).toContain('params:      {"cmd":"rm -rf /tmp/x"}');
    expect(shown.out).toContain("asked by:    asker");

    const denied = await cli(["approvals", "deny", id, "--as", "bob", "--reason", "no", ...flags]);
    expect(denied.code, denied.err).toBe(0);
    expect(denied.out).toMatch(new RegExp(`^${id}: denied \\(record #\\d+\\)$`));
    expect((await result).decision).toMatchObject({
      outcome: "block",
      blockReason: "approval denied by bob: no",
    });

    const again = await cli(["approvals", "approve", id, "--as", "alice", ...flags]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("HOOKBUS_APPROVAL_SETTLED");
    // The same approver answering again (a retry to the coordinator) is told it was settled too.
    const repeated = await cli(["approvals", "deny", id, "--as", "bob", ...flags]);
    expect(repeated.code).toBe(1);
    expect(repeated.err).toContain(
      `HOOKBUS_APPROVAL_SETTLED: approval ${id} was already settled: denied (by bob); your deny was not sent`,
    );

    // --json: one record per line.
    const listed = await cli(["approvals", "list", "--all", "--json", ...flags]);
    const entries = listed.out.split("\n").map((l) => JSON.parse(l) as unknown) as {
      id: string;
      settlement?: { resolution: string };
      answers: { from?: string }[];
    }[];
    expect(entries).toMatchObject([
      { id, settlement: { resolution: "denied" }, answers: [{ from: "cli" }] },
    ]);
    expect((await cli(["approvals", "list", ...flags])).out).toBe("no pending approval requests");
  }, 60_000);
});
