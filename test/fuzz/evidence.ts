/**
 * The fuzz run's tamper evidence (issue 21, "verify names only tampering"): the coordinator signs
 * what it appends with a key of its own, a sealer seals the log alongside, and after the run
 * `hookbus audit verify` checks the namespace with both trusted keys, as an operator runs it.
 *
 * The fuzzer sends only to the call and observe subjects (and answers policy requests): it never
 * publishes to the log subjects itself, so every record in the log was written by hookbus and any
 * verify finding is a false alarm.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Bus } from "../../src/bus/bus.js";
import { main } from "../../src/cli/main.js";
import type { VerifyReport } from "../../src/audit/verify.js";
import { createSealKey, sealKeyFromSeed } from "../../src/log/seal/keys.js";
import { createSigningKey } from "../../src/log/sign/keys.js";
import { readSealLag } from "../../src/sealer/lag.js";
import { startSealer, type Sealer } from "../../src/sealer/sealer.js";
import { until } from "../support/wait.js";

export interface FuzzVerify {
  /** `hookbus audit verify`'s exit code (0: nothing wrong). */
  exitCode: number;
  /** Verify's findings: all false alarms, since the fuzzer never writes to the log itself. */
  findings: VerifyReport["findings"];
  records: number;
  sealed: number;
  /** Records covered by a valid signature of the coordinator's key. */
  signedRecords: number;
  /** Records still waiting for their signature batch (inside the grace: not a finding). */
  pendingSignatures: number;
}

export interface FuzzEvidence {
  /** The coordinator's extra arguments: its signing key. */
  coordinatorArgs: string[];
  /** Wait until the sealer covers the whole log, then run `hookbus audit verify` on it. */
  verify(bus: Bus, url: string): Promise<FuzzVerify>;
  stop(): Promise<void>;
}

export async function startFuzzEvidence(
  nc: NatsConnection,
  namespace: string,
): Promise<FuzzEvidence> {
  const dir = mkdtempSync(join(tmpdir(), "hookbus-fuzz-"));
  const signing = createSigningKey();
  const keyFile = join(dir, "coordinator.seed");
  writeFileSync(keyFile, `${signing.seed}\n`, { mode: 0o600 });
  const seal = createSealKey();
  let sealer: Sealer | undefined;
  try {
    sealer = await startSealer({
      nc,
      namespace,
      key: sealKeyFromSeed(seal.seed),
      maxBatch: 64,
      maxDelayMs: 50,
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    coordinatorArgs: ["--sign-key-file", keyFile, "--require-signing"],
    async verify(bus, url) {
      const last = (await bus.jsm.streams.info(bus.subjects.logStream)).state.last_seq;
      await until(async () => (await readSealLag(bus)).sealedSeq >= last, 20_000, "log sealed");
      const stdout: string[] = [];
      const stderr: string[] = [];
      const exitCode = await main(
        [
          "audit",
          "verify",
          "--json",
          "--key",
          seal.publicKey,
          "--coordinator-key",
          signing.publicKey,
          "--server",
          url,
          "--namespace",
          namespace,
        ],
        { print: (l) => stdout.push(l), error: (l) => stderr.push(l) },
      );
      if (stdout.length === 0)
        throw new Error(`audit verify printed nothing: ${stderr.join("\n")}`);
      const report = JSON.parse(stdout.join("\n")) as VerifyReport;
      return {
        exitCode,
        findings: report.findings,
        records: report.records,
        sealed: report.sealed,
        signedRecords: report.recordSignatures?.signed ?? 0,
        pendingSignatures: report.recordSignatures?.pending ?? 0,
      };
    },
    async stop() {
      await sealer?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
