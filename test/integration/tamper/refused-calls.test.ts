/**
 * Issue 21, finding 4: `audit verify` names only tampering. A call refused because its body
 * claims another agent (and one with a session key no subject can carry) leaves an error record
 * filed under the subject's agent; that record says the same agent and session as its subject, so
 * an untampered sealed log still verifies (exit 0) — before, one such call turned it into exit 1
 * (`subject-mismatch`), so any agent could break every gate that relies on verify.
 */
import { describe, expect, it } from "vitest";
import { verifyLog } from "../../../src/audit/verify.js";
import { json, rawRequest, toolCall } from "../security/harness.js";
import { useNatsServer } from "../pipeline/harness.js";
import { AGENT, hookbus, sealKey, sealedUpToNow, sealerFor, sessionPipeline } from "./harness.js";

const nats = useNatsServer();

describe("refused calls and audit verify", () => {
  it("a call claiming another agent is refused and the sealed log still verifies clean", async () => {
    const { p } = await sessionPipeline(nats.url(), { calls: 1, editable: false });
    const sealer = await sealerFor(p.bus);
    try {
      const subject = p.subjects.call(AGENT, "before_tool_call");
      const spoofed = await rawRequest(
        p.connections.agent,
        p,
        subject,
        json(toolCall("spoof-1", { agentId: "victim", sessionKey: "s-victim" })),
      );
      expect(spoofed.code).toBe("HOOKBUS_IDENTITY_MISMATCH");
      const badSession = await rawRequest(
        p.connections.agent,
        p,
        subject,
        json(toolCall("spoof-2", { agentId: AGENT, sessionKey: 42 })),
      );
      expect(badSession.code).toBeDefined();
      await sealedUpToNow(p.bus);

      const report = await verifyLog(p.bus, { keys: [sealKey.publicKey] });
      expect(report.findings).toEqual([]);
      expect(report.ok).toBe(true);
      const cli = await hookbus(
        nats.url(),
        p.namespace,
        "audit",
        "verify",
        "--key",
        sealKey.publicKey,
      );
      expect(cli.code).toBe(0);
      // The refusal itself is kept: who claimed whom is in the error record.
      const log = await p.readLog();
      const refused = log.find((r) => r.record.kind === "error" && r.record.callId === "spoof-1");
      expect(refused?.record).toMatchObject({
        context: { agentId: AGENT, sessionKey: "s-victim" },
        error: { code: "HOOKBUS_IDENTITY_MISMATCH", details: { claimed: "victim" } },
      });
    } finally {
      await sealer.stop();
      await p.stop();
    }
  });
});
