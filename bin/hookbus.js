#!/usr/bin/env node
// The hookbus CLI: compiled JavaScript in dist/ (`npm run build`; `npm pack` builds it first).
// No TypeScript loader runs the built-in commands; tsx is loaded only to import a user's .ts
// policy module (src/worker/import-module.ts).
//
// HOOKBUS_CLI_SOURCE=1 runs the TypeScript sources through tsx instead: for the checkout's own
// tests and `npm run hookbus`, so they never run a stale dist/. The published package has no src/.
import { existsSync } from "node:fs";
import process from "node:process";
import { URL } from "node:url";

const fromSource = process.env.HOOKBUS_CLI_SOURCE === "1";
const entry = new URL(fromSource ? "../src/cli/main.ts" : "../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    fromSource
      ? "HOOKBUS_CLI_SOURCE=1 needs the TypeScript sources (a checkout of hookbus); unset it to run dist/\n"
      : "hookbus is not built: dist/cli/main.js is missing (in a checkout, run `npm run build`)\n",
  );
  process.exit(1);
}
if (fromSource) (await import("tsx/esm/api")).register();
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
