/**
 * The privacy role on a server configured by `hookbus auth` (docs/privacy.md, docs/security.md):
 * a privacy user erases a subject (its signed erasure record verifies under the trusted keys
 * `hookbus auth` wrote); a coordinator and an auditor cannot delete a data key's stored value; the
 * privacy user cannot write any other log record.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";
import { eraseSubject } from "../../../src/erasure/erase.js";
import { runRetention } from "../../../src/erasure/retention.js";
import { signingKeyFromFile, parseTrustedKeys } from "../../../src/log/sign/keys.js";
import {
  DataKeyStore,
  keysBucketName,
  keyName,
  parseKek,
  subjectDigest,
} from "../../../src/privacy/index.js";
import { verifyLog } from "../../../src/audit/verify.js";
import { publishDenied, requestDenied, useAuthServer } from "../auth/harness.js";

const NS = "priv";
const server = useAuthServer({
  namespace: NS,
  coordinators: ["c1"],
  auditors: ["aud"],
  operators: ["ops"],
  privacy: ["dpo"],
});
const kek = parseKek(randomBytes(32).toString("base64"), "test");

describe("the privacy role", () => {
  it("alone deletes data keys, and its erasure record verifies under the trusted keys", async () => {
    const generated = server.generated();
    const keyOf = (name: string) => generated.signingKeys.find((k) => k.coordinator === name)!;
    // The operator creates the registry, as in a deployment.
    const registry = await RegistryStore.open(await server.as("operator", "ops"), new Subjects(NS));
    const coordinatorNc = await server.as("coordinator", "c1");
    const coordinator = await startCoordinator({
      nc: coordinatorNc,
      namespace: NS,
      privacy: { kek },
      signingKey: signingKeyFromFile(keyOf("c1").file),
    });
    try {
      const subject = subjectDigest("session:s1");
      const store = await DataKeyStore.open(coordinatorNc, new Subjects(NS), kek);
      await store.current(subject);
      const revision = (await store.kv.get(keyName(subject)))!.revision;
      const deleteKey = `$JS.API.STREAM.MSG.DELETE.KV_${keysBucketName(new Subjects(NS))}`;

      // Neither a coordinator nor an auditor may delete the stored key.
      await requestDenied(coordinatorNc, deleteKey, JSON.stringify({ seq: revision }));
      const auditorNc = await server.as("auditor", "aud");
      await requestDenied(auditorNc, deleteKey, JSON.stringify({ seq: revision }));

      // The privacy user may, and may append only erasure records.
      const privacyNc = await server.as("privacy", "dpo");
      const bus = await Bus.open(privacyNc, { namespace: NS });
      await publishDenied(privacyNc, `${NS}.audit.A.s1.before_tool_call.allow`);
      const erased = await eraseSubject(
        { target: "session", id: "s1", reason: "request #1", by: "dpo" },
        { bus, signingKey: signingKeyFromFile(keyOf("privacy.dpo").file) },
      );
      expect(erased.record.keyPurged).toBe(true);
      expect(await store.kv.get(keyName(subject))).toMatchObject({ operation: "PURGE" });

      const report = await verifyLog(await Bus.open(auditorNc, { namespace: NS }), {
        coordinatorKeys: parseTrustedKeys([], generated.trustedKeysFile),
      });
      expect(report.findings).toEqual([]);

      // Retention runs as the privacy user too: it lists the keys and reads the registry's rules.
      await registry.apply({ policies: [], retention: { days: 0 } });
      const second = subjectDigest("session:s2");
      await store.current(second, { agent: "A", target: "session" });
      const run = await runRetention({
        bus,
        signingKey: signingKeyFromFile(keyOf("privacy.dpo").file),
      });
      expect(run.erasures.map((e) => [e.record.subject, e.record.by])).toEqual([
        [second, "retention:namespace"],
      ]);
      expect(await store.kv.get(keyName(second))).toMatchObject({ operation: "PURGE" });
    } finally {
      await coordinator.stop();
    }
  }, 60_000);
});
