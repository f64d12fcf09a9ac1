/** hookbus/sealer: the sealer role and its keys (docs/tamper-evidence.md). */
export { startSealer, type Sealer, type SealerOptions, type SealLag } from "./sealer.js";
export { readSealLag, type StreamSealLag } from "./lag.js";
export {
  createSealKey,
  parsePublicKeys,
  sealKeyFromFile,
  sealKeyFromSeed,
  type SealKeyPair,
} from "../log/seal/keys.js";
export { SealBatch, sealStreamName } from "../log/seal/batch.js";
export { chainHash } from "../log/seal/hash.js";
