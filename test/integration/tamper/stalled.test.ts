/**
 * The attack of a sealer-lease holder: sealing stopped (the lease taken, the sealer starved), a
 * new blocked call removed from the log before any seal saw it, then sealing resumed. The seals
 * alone cannot show the removed record; verify names the stall instead.
 */
import { describe, expect, it } from "vitest";
import { until } from "../../support/wait.js";
import { useNatsServer } from "../pipeline/harness.js";
import { auditedSession, sealedUpToNow, toolCtx, toolEvent } from "./harness.js";

const nats = useNatsServer();

describe("a stalled sealer", () => {
  it("is a finding: a record removed while sealing was stopped no longer passes verify", async () => {
    const { p, sealer, addSealer, verify } = await auditedSession(nats.url());
    await sealer!.stop(); // the attacker holds the lease: nothing is sealed from here on
    expect((await verify("--max-seal-delay", "1s")).code).toBe(0);

    const blocked = await p.client.call(
      "before_tool_call",
      toolCtx("tc-evil", "exec"),
      toolEvent("tc-evil", "exec"),
      { callId: "call-evil" },
    );
    expect(blocked.decision.outcome).toBe("block");
    await p.bus.jsm.streams.deleteMessage(p.subjects.logStream, blocked.recordSeq!);
    // A later call, stored while sealing is still stopped, then sealing resumes past the bound.
    const later = await p.client.call(
      "before_tool_call",
      toolCtx("tc-later", "read_file"),
      toolEvent("tc-later", "read_file"),
      { callId: "call-later" },
    );
    const storedAt = Date.now();
    await until(() => Date.now() - storedAt > 1500, 5000, "past the bound");
    const unsealed = await verify("--max-seal-delay", "1s");
    expect(unsealed.code).toBe(1);
    expect(unsealed.stdout).toMatch(/^stalled .*are unsealed, the oldest for \d+ s \(bound 1 s\)/m);

    const resumed = await addSealer();
    await sealedUpToNow(p.bus);
    await resumed.stop();
    const resealed = await verify("--max-seal-delay", "1s");
    expect(resealed.code).toBe(1);
    expect(resealed.stdout).toContain(`seq ${later.recordSeq!} `);
    expect(resealed.stdout).toMatch(/sealed \d+ s after it was stored \(bound 1 s\)/);
    expect(resealed.stdout).toMatch(/^STALLED: nothing found altered/m);
    // The default bound (50 s) is not reached in this test: the same log verifies clean.
    expect((await verify()).code).toBe(0);
  });
});
