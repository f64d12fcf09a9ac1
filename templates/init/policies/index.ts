// Both policies in one worker: `npx hookbus worker policies/index.ts` (or one file per worker).
export { noShell } from "./no-shell.js";
export { redactSecrets } from "./redact-secrets.js";
