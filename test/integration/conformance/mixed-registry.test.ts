/**
 * One registry, policies in two languages: the Python egress policy (examples/python, served by
 * hookbus-worker) and the TypeScript no-shell policy (runPolicy) govern one session end to end on
 * a real NATS server, their verdicts merged by priority and recorded in the same log records.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { noShell } from "../../../examples/no-shell-policy.js";
import { Probe } from "../../../src/conformance/probe.js";
import { remotePolicy, replay, type ReplayResult } from "../../../src/replay/index.js";
import { startWorkerProcess, type WorkerProcess } from "../../../src/conformance/processes.js";
import { startPipeline, until, useNatsServer } from "../pipeline/harness.js";

const HOOKBUS_WORKER = ".tools/python/bin/hookbus-worker";
const nats = useNatsServer();

describe.skipIf(!existsSync(HOOKBUS_WORKER))(
  "a registry mixing Python and TypeScript policies",
  () => {
    it("governs a session end to end, both languages' verdicts in the same log", async () => {
      const p = await startPipeline(nats.url(), {
        policies: [noShell],
        registry: {
          policies: [
            { name: "egress", hooks: ["before_tool_call"], priority: 20, timeoutMs: 3000 },
            { name: "no-shell", hooks: ["before_tool_call", "before_llm_call"], priority: 10 },
          ],
        },
      });
      let python: WorkerProcess | undefined;
      try {
        python = startWorkerProcess([HOOKBUS_WORKER, "examples/python/egress_policy.py:egress"], {
          NATS_URL: nats.url(),
          HOOKBUS_NAMESPACE: p.namespace,
          HOOKBUS_EGRESS_ALLOW: "example.com",
        });
        const probe = new Probe(p.bus, "egress");
        await until(
          async () =>
            (
              await probe.ask({
                hook: "before_tool_call",
                body: {
                  callId: "ready",
                  hook: "before_tool_call",
                  context: { agentId: "probe", sessionKey: "probe" },
                  event: { toolName: "noop", params: {} },
                },
                timeoutMs: 1000,
                windowMs: 1000,
                stopAfter: 1,
              })
            ).some((r) => r.status === undefined),
          30_000,
          `the Python worker answers (${python.output()})`,
        );

        const ctx = { agentId: "agent-1", sessionKey: "mixed-1" };
        const fetch = (url: string) =>
          p.client.decide("before_tool_call", ctx, { toolName: "web_fetch", params: { url } });
        const allowed = await fetch("https://ＥＸＡＭＰＬＥ.com./docs");
        const lookAlike = await fetch("https://exаmple.com/login"); // Cyrillic а
        const shell = await p.client.decide("before_tool_call", ctx, {
          toolName: "exec",
          params: { cmd: "ls" },
        });

        expect(allowed.outcome).toBe("allow");
        expect(lookAlike).toMatchObject({
          outcome: "block",
          blockedBy: "egress",
          blockReason: "exаmple.com is a look-alike of example.com",
        });
        expect(shell).toMatchObject({ outcome: "block", blockedBy: "no-shell" });

        const decisions = (await p.readLog()).filter(
          (r) => r.record.kind === "decision" && r.record.context.sessionKey === "mixed-1",
        );
        expect(decisions).toHaveLength(3);
        for (const { record } of decisions) {
          if (record.kind !== "decision") continue;
          // Both languages asked for every call, in merge order, each with its version.
          expect(record.outcomes.map((o) => [o.policy, o.version, o.status])).toEqual([
            ["egress", "1.0.0", "ok"],
            ["no-shell", "1.0.0", "ok"],
          ]);
        }

        // Replayable: replay asks the live Python worker through the bus, no-shell in process.
        const egress = await remotePolicy({
          nc: p.connections.reader,
          namespace: p.namespace,
          name: "egress",
        });
        const results: ReplayResult[] = [];
        for await (const r of replay({
          records: decisions.map((d) => d.record),
          policies: [egress, noShell],
          registry: {
            policies: [
              { name: "egress", hooks: ["before_tool_call"], priority: 20 },
              { name: "no-shell", hooks: ["before_tool_call", "before_llm_call"], priority: 10 },
            ],
          },
        }))
          results.push(r);
        expect(results.map((r) => [r.status, r.replayed.outcome, r.replayed.blockedBy])).toEqual([
          ["unchanged", "allow", undefined],
          ["unchanged", "block", "egress"],
          ["unchanged", "block", "no-shell"],
        ]);
      } finally {
        python?.signal("SIGTERM");
        if (python !== undefined) expect(await python.exited).toBe(0);
        await p.stop();
      }
    }, 90_000);
  },
);
