/** The running hookbus version, read once from the package's own package.json. */
import { createRequire } from "node:module";

// src/observability/ and dist/observability/ are both two levels below package.json.
const pkg = createRequire(import.meta.url)("../../package.json") as { version?: unknown };

export const HOOKBUS_VERSION: string = typeof pkg.version === "string" ? pkg.version : "unknown";
