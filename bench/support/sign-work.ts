/**
 * The coordinator's signing work per record, measured alone (steady, unlike the A/B of whole
 * calls on a shared machine): hashing each stored record (`recordHash`) and, per batch of 256,
 * the batch's JSON and its Ed25519 signature, as src/coordinator/record-signer.ts does. The
 * batch's one JetStream publish per 256 records is not included.
 */
import { randomBytes } from "node:crypto";
import { recordHash } from "../../src/log/sign/batch.js";
import { createSigningKey, signingKeyFromSeed } from "../../src/log/sign/keys.js";

const BATCH = 256;

export function signWorkPerRecordUs(recordBytes: number, records = 51_200): number {
  const key = signingKeyFromSeed(createSigningKey().seed);
  const data = randomBytes(recordBytes);
  const subject = "bench.audit.bench-agent.bench-session-1.before_tool_call.allow";
  const encoder = new TextEncoder();
  const run = (n: number) => {
    let batch: [number, string][] = [];
    for (let seq = 1; seq <= n; seq++) {
      batch.push([seq, recordHash(subject, data)]);
      if (batch.length === BATCH) {
        const body = encoder.encode(
          JSON.stringify({ v: 1, epoch: "e", index: seq, prev: null, records: batch }),
        );
        key.sign(body);
        batch = [];
      }
    }
  };
  run(BATCH * 20); // warm up
  const before = process.cpuUsage();
  run(records);
  const cpu = process.cpuUsage(before);
  return (cpu.user + cpu.system) / records;
}
