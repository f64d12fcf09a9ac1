/**
 * The sealer lease names its holder's key (issue 21): `audit verify --key` reports a live lease
 * held by anything but a trusted sealer, since whoever holds it can stop sealing; an honest
 * sealer's lease is no finding.
 */
import { describe, expect, it } from "vitest";
import { Kvm } from "@nats-io/kv";
import { useNatsServer } from "../pipeline/harness.js";
import { auditedSession, sealKey } from "./harness.js";
import { createSealKey, sealKeyFromSeed } from "../../../src/log/seal/keys.js";
import { leaseBucketName, leaseClaimBytes } from "../../../src/sealer/lease.js";
import type { VerifyReport } from "../../../src/audit/verify.js";

const nats = useNatsServer();

describe("the sealer lease in audit verify", () => {
  it("is no finding with an honest sealer, and a finding when a non-sealer key holds it", async () => {
    const { p, sealer, cli } = await auditedSession(nats.url(), { editable: false });
    const verify = async (...keys: string[]) => {
      const run = await cli("audit", "verify", "--json", ...keys.flatMap((k) => ["--key", k]));
      return { code: run.code, report: JSON.parse(run.stdout) as VerifyReport };
    };
    const honest = await verify(sealKey.publicKey);
    expect(honest.report.findings).toEqual([]);
    expect(honest.code).toBe(0);
    await sealer!.stop(); // released: an expired lease is no finding either
    expect((await verify(sealKey.publicKey)).code).toBe(0);

    // The attacker writes the lease bucket: its own key, signed correctly by that key.
    const kv = await new Kvm(p.bus.nc).open(leaseBucketName(p.subjects));
    const intruder = sealKeyFromSeed(createSealKey().seed);
    const until = Date.now() + 60_000;
    const claim = leaseClaimBytes(p.namespace, "evil", until);
    const put = (value: object) =>
      kv.put("lease", JSON.stringify({ holder: "evil", until, ...value }));
    await put({ key: intruder.publicKey, sig: intruder.sign(claim) });
    const untrusted = await verify(sealKey.publicKey);
    expect(untrusted.code).toBe(1);
    expect(untrusted.report.findings).toHaveLength(1);
    expect(untrusted.report.findings[0]).toMatchObject({ kind: "lease", reason: "untrusted-key" });
    expect(untrusted.report.findings[0]!.message).toContain(intruder.publicKey);
    // Trusting that key too (as an operator who rotated keys would) clears it.
    expect((await verify(sealKey.publicKey, intruder.publicKey)).code).toBe(0);

    // Naming the trusted key without its signature, or no key at all, is no way around it.
    await put({ key: sealKey.publicKey, sig: intruder.sign(claim) });
    expect((await verify(sealKey.publicKey)).report.findings[0]?.reason).toBe("bad-signature");
    await put({});
    const unkeyed = await verify(sealKey.publicKey);
    expect(unkeyed.report.findings[0]?.reason).toBe("unkeyed-lease");
    // Without trusted keys there is nothing to hold the lease's key against: not checked.
    const selfDeclared = await cli("audit", "verify");
    expect(selfDeclared.code).toBe(0);

    // The human report names it.
    const text = await cli("audit", "verify", "--key", sealKey.publicKey);
    expect(text.stdout).toMatch(/^lease {8}the sealer lease is held by "evil" for \d+ s more/m);
    expect(text.stdout).toContain("1 about the sealer lease");
  });
});
