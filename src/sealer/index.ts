export { startSealer, type Sealer, type SealerOptions, type SealLag } from "./sealer.js";
export { readSealLag, type StreamSealLag } from "./lag.js";
export {
  createSealKey,
  parsePublicKeys,
  sealKeyFromFile,
  sealKeyFromSeed,
  verifySignature,
  type SealKeyPair,
} from "./keys.js";
export {
  SealBatch,
  sealStreamName,
  sealSubject,
  sessionOfSubject,
  type SealedSession,
} from "./batch.js";
export { chainHash, bytesHash } from "./hash.js";
