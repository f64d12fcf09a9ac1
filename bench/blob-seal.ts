/**
 * What sealing a large body's blob costs in CPU (docs/privacy.md, "Blobs"): per 1.5 MB body
 * (gzipped base64 of random bytes, the shape of a large call), the work `BlobStore.put` + `get`
 * did before (a sha256 on each side) against what they do now (seal, a sha256 of the sealed
 * bytes on each side, open), interleaved in one run, with the gzip of the same body for scale.
 *
 *   npx tsx bench/blob-seal.ts
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";

const ROUNDS = 40;
const WARM_UP = 5;
const body = gzipSync(Buffer.from(randomBytes(1.5 * 1024 * 1024).toString("base64")));
const json = gunzipSync(body);
const sha = (b: Buffer) => createHash("sha256").update(b).digest();

function before(b: Buffer): void {
  sha(b); // put
  sha(b); // get
}

/** The same cipher, sizes and steps as src/bus/blobs.ts. */
function now(b: Buffer): void {
  const key = randomBytes(32);
  const iv = randomBytes(12);
  const c = createCipheriv("chacha20-poly1305", key, iv, { authTagLength: 16 });
  const sealed = Buffer.concat([c.update(b), c.final(), c.getAuthTag()]);
  sha(sealed); // put
  sha(sealed); // get
  const d = createDecipheriv("chacha20-poly1305", key, iv, { authTagLength: 16 });
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
}

const ways: [string, () => void][] = [
  ["before", () => before(body)],
  ["now", () => now(body)],
  ["gzip", () => void gzipSync(json)],
];
const cpuMs = new Map<string, number[]>(ways.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of round % 2 === 0 ? ways : [...ways].reverse()) {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    if (round >= WARM_UP) cpuMs.get(name)!.push((used.user + used.system) / 1000);
  }
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const m = (name: string) => median(cpuMs.get(name)!);
console.log(
  `blob-seal: body_bytes=${body.length} rounds=${ROUNDS - WARM_UP} before_cpu_ms=${m("before").toFixed(2)} now_cpu_ms=${m("now").toFixed(2)} added_cpu_ms=${(m("now") - m("before")).toFixed(2)} gzip_cpu_ms=${m("gzip").toFixed(2)}`,
);
