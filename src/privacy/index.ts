/** Erasure by crypto-shredding (docs/privacy.md). */
export * from "./kek.js";
export * from "./fields.js";
export * from "./subject.js";
export * from "./record-cipher.js";
export * from "./data-keys.js";
export * from "./record-keys.js";
