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

// The supported Node (src/foundation/runtime.ts says why; a unit test keeps both in step): checked
// before anything is imported, so an old Node gets the coded refusal and not a crash.
const SUPPORTED_NODE_MAJOR = 24;
if (Number.parseInt(process.versions.node, 10) < SUPPORTED_NODE_MAJOR) {
  process.stderr.write(
    `HOOKBUS_UNSUPPORTED_NODE: hookbus needs Node ${SUPPORTED_NODE_MAJOR} or newer, this is Node ${process.versions.node}: ` +
      "run it on Node 24 LTS or newer: in a hookbus checkout, `bash scripts/setup.sh` puts Node 24 in .tools/bin " +
      '(then run commands with PATH="$PWD/.tools/bin:$PATH"); elsewhere install Node 24 LTS\n',
  );
  process.exit(2);
}

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
