/** Erasing a data subject (docs/privacy.md). */
export * from "./erase.js";
export * from "./retention.js";
