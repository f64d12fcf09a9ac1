/**
 * `hookbus status` shows the sealer's evidence lag on a real NATS server: "no sealer" before one
 * ran, 0 records once it caught up, > 0 when it is stopped and records are added, and `--check`
 * failing once the oldest unsealed record is older than `--max-seal-lag-s`.
 */
import { describe, expect, it } from "vitest";
import { until, useNatsServer } from "../pipeline/harness.js";
import { AGENT, hookbus, sealedUpToNow, sealerFor, sessionPipeline } from "../tamper/harness.js";

const nats = useNatsServer();

interface StatusJson {
  sealer: {
    present: boolean;
    records?: number;
    seconds?: number;
    leaseHolder?: string;
    sealedSeq?: number;
  };
  indexer: { present: boolean };
  problems: string[];
}

async function statusJson(url: string, namespace: string): Promise<StatusJson> {
  const run = await hookbus(url, namespace, "status", "--json", "--wait", "300");
  return JSON.parse(run.stdout) as StatusJson;
}

describe("hookbus status: evidence lag", () => {
  it("shows no sealer, then the lag of a running sealer, then a growing lag that fails --check", async () => {
    const { p } = await sessionPipeline(nats.url(), { calls: 2, editable: false });
    const url = nats.url();
    const before = await hookbus(url, p.namespace, "status", "--wait", "300");
    expect(before.stdout).toContain("sealer: no sealer");
    expect(before.stdout).toContain("indexer: no indexer");
    expect((await statusJson(url, p.namespace)).sealer).toEqual({ present: false });

    const sealer = await sealerFor(p.bus, { id: "sealer-status" });
    let stopped = false;
    try {
      await sealedUpToNow(p.bus);
      const caughtUp = await statusJson(url, p.namespace);
      expect(caughtUp.sealer).toMatchObject({
        present: true,
        records: 0,
        leaseHolder: "sealer-status",
      });
      const text = await hookbus(url, p.namespace, "status", "--wait", "300");
      expect(text.stdout).toMatch(
        /sealer: active sealer-status \(key [A-Z2-7]{12}…\) {2}evidence lag 0 record\(s\)/,
      );

      await sealer.stop();
      stopped = true;
      const ctx = { agentId: AGENT, sessionKey: "s-lag", runId: "r-lag" };
      await p.client.beforeToolCall(ctx, { toolName: "ls", toolCallId: "t-lag", params: {} });
      await until(
        async () => ((await statusJson(url, p.namespace)).sealer.records ?? 0) > 0,
        5000,
        "seal lag > 0",
      );
      const behind = await statusJson(url, p.namespace);
      expect(behind.sealer.leaseHolder).toBeUndefined();
      expect(behind.problems.join("\n")).toContain("no sealer holds the lease");

      await until(
        async () => ((await statusJson(url, p.namespace)).sealer.seconds ?? 0) > 1,
        10_000,
        "seal lag over 1 s",
      );
      const check = await hookbus(
        url,
        p.namespace,
        "status",
        "--check",
        "--max-seal-lag-s",
        "1",
        "--wait",
        "300",
      );
      expect(check.code).toBe(1);
      expect(check.stdout).toMatch(/evidence lag \d+ record\(s\), [\d.]+ s \(over 1 s\)/);
    } finally {
      if (!stopped) await sealer.stop();
      await p.stop();
    }
  });
});
