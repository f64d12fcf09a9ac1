/**
 * Durability and exactly-once on a real nats-server: a coordinator SIGKILLed (a child process)
 * while a request is pending loses nothing, and a timeout noticed by several coordinators and the
 * agent at once is recorded once. Replay reports a changed approval requirement and asks nobody.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { Bus, type ApprovalProgress } from "../../../src/index.js";
import { startChild, type Child } from "../../support/child.js";
import { readLog, readStoredLog } from "../../support/log.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { rejection, until } from "../../support/wait.js";
import {
  asker,
  ctx,
  REGISTRY,
  rewriter,
  startPipeline,
  toolEvent,
  type Pipeline,
} from "./harness.js";
import { answerApproval } from "../../../src/approvals/client.js";
import { replay } from "../../../src/replay/replay.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const nats = useNatsServer();
let pipeline: Pipeline | undefined;
const children: Child[] = [];
const coordinators: Coordinator[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.child.exitCode === null) c.child.kill("SIGKILL");
    await c.exited;
  }
  await pipeline?.client.close();
  for (const c of coordinators.splice(0)) await c.stop();
  await pipeline?.runner.stop();
  pipeline = undefined;
});

describe("approvals across failures", () => {
  it("a coordinator SIGKILLed while a request is pending loses nothing: another one settles it", async () => {
    const namespace = uniqueNamespace("apk");
    pipeline = await startPipeline(() => nats.connect(), namespace, { coordinator: false });
    const doomed = startChild(
      [cli, "coordinator", "--server", nats.url(), "--namespace", namespace, "--id", "doomed"],
      { LOG_LEVEL: "info" },
    );
    children.push(doomed);
    await until(
      () => doomed.output().includes("coordinator ready"),
      30_000,
      `CLI coordinator ready (stderr: ${doomed.errors()})`,
    );
    const progress: ApprovalProgress[] = [];
    const result = pipeline.client.call("before_tool_call", ctx("k-1"), toolEvent("k-1"), {
      callId: "k-1",
      onApproval: (p) => progress.push(p),
    });
    result.catch(() => {});
    const first = await until(() => progress[0], 20_000, "the request is pending");

    doomed.child.kill("SIGKILL");
    await doomed.exited;
    const nc = await nats.connect();
    // Nobody takes answers now; the request waits in the bucket.
    expect(
      await rejection(
        answerApproval(
          nc,
          { id: first.id, decision: "approve" },
          { namespace, approver: "alice", timeoutMs: 1000 },
        ),
      ),
    ).toMatchObject({ code: "HOOKBUS_COORDINATOR_UNAVAILABLE" });

    coordinators.push(await startCoordinator({ nc: await nats.connect(), namespace, id: "heir" }));
    await answerApproval(
      nc,
      { id: first.id, decision: "approve", reason: "after the crash" },
      { namespace, approver: "alice" },
    );
    const { decision } = await result;
    expect(decision).toMatchObject({
      outcome: "allow",
      resolvedApproval: { resolution: "approved" },
    });

    const stored = await readStoredLog(await Bus.open(nc, { namespace }));
    const pending = stored.filter((r) => r.record.kind === "decision");
    const settled = stored.filter((r) => r.record.kind === "approval");
    expect(pending.map((r) => r.record.coordinator)).toEqual(["doomed"]);
    expect(settled).toHaveLength(1);
    expect(settled[0]?.record).toMatchObject({ coordinator: "heir", decisionSeq: pending[0]?.seq });
  }, 90_000);

  it("a timeout noticed by two coordinators' sweeps and the agent at once is recorded exactly once", async () => {
    const namespace = uniqueNamespace("apt");
    pipeline = await startPipeline(() => nats.connect(), namespace, { coordinator: false });
    for (const id of ["c-a", "c-b"])
      coordinators.push(
        await startCoordinator({ nc: await nats.connect(), namespace, id, approvalSweepMs: 50 }),
      );
    const calls = ["t-1", "t-2", "t-3"].map((id) =>
      pipeline!.client.call("before_tool_call", ctx(id), toolEvent(id, { t: 1000 }), {
        callId: id,
      }),
    );
    const results = await Promise.all(calls);
    for (const r of results) expect(r.decision).toMatchObject({ outcome: "block" });
    const records = await readLog(await Bus.open(await nats.connect(), { namespace }));
    for (const id of ["t-1", "t-2", "t-3"])
      expect(records.filter((r) => r.kind === "approval" && r.callId === id)).toHaveLength(1);
  }, 60_000);

  it("replay reports a changed approval requirement as a change, and never asks a person", async () => {
    const namespace = uniqueNamespace("apr");
    pipeline = await startPipeline(() => nats.connect(), namespace);
    coordinators.push(pipeline.coordinator!);
    delete pipeline.coordinator;
    const result = pipeline.client.call(
      "before_tool_call",
      ctx("r-1"),
      toolEvent("r-1", { t: 1000 }),
      {
        callId: "r-1",
      },
    );
    await result;
    const records = await readLog(await Bus.open(await nats.connect(), { namespace }));
    const results = [];
    // Without the asker the call is simply allowed; with it, nothing changes.
    for await (const r of replay({
      records,
      policies: [asker, rewriter],
      registry: { policies: REGISTRY.policies.filter((p) => p.name !== "asker") },
    }))
      results.push(r);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: "changed" });
    expect(results[0]?.diff.map((c) => c.field)).toContain("requireApproval");
    const same = [];
    for await (const r of replay({ records, policies: [asker, rewriter], registry: REGISTRY }))
      same.push(r);
    expect(same[0]).toMatchObject({ status: "unchanged" });
    // No person was asked: the replay ran in process, and the log still holds exactly one
    // settlement (the live timeout's), none from the replay.
    const after = await readLog(await Bus.open(await nats.connect(), { namespace }));
    expect(after.filter((r) => r.kind === "approval")).toHaveLength(1);
  }, 60_000);
});
