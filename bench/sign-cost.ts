/**
 * `npm run bench:sign`: the CPU cost of signing each log record with Ed25519 (node:crypto, one
 * key per coordinator) and of checking it (sealer, `audit verify`), for record sizes a decision
 * takes. Issue 21 item 7 budgets signing at 5 % of a call's coordinator CPU; compare the figure
 * with the coordinator's CPU per call in docs/performance.md.
 */
import { generateKeyPairSync, randomBytes, sign, verify } from "node:crypto";

const ROUNDS = Number(process.env.BENCH_SIGNATURES ?? 20_000);
const SIZES = [512, 2048, 16_384];

function microsPer(work: () => void, n: number): number {
  for (let i = 0; i < Math.min(2000, n); i++) work();
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) work();
  const cpu = process.cpuUsage(before);
  return (cpu.user + cpu.system) / n;
}

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
console.log("record bytes | sign µs CPU | verify µs CPU");
for (const size of SIZES) {
  const record = randomBytes(size);
  const signature = sign(null, record, privateKey);
  const signUs = microsPer(() => sign(null, record, privateKey), ROUNDS);
  const verifyUs = microsPer(() => {
    if (!verify(null, record, publicKey, signature)) throw new Error("bad signature");
  }, ROUNDS);
  console.log(`${size} | ${signUs.toFixed(1)} | ${verifyUs.toFixed(1)}`);
}
