import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  // Examples import "hookbus" as users do; in the checkout that is the source (tsconfig "paths").
  resolve: {
    alias: [
      { find: /^hookbus$/, replacement: source("./src/index.ts") },
      {
        find: /^hookbus\/(ai|pi|openai-agents|mcp|openclaw)$/,
        replacement: source("./src/adapters/$1/index.ts"),
      },
      { find: /^hookbus\/([a-z-]+)$/, replacement: source("./src/$1/index.ts") },
    ],
  },
  test: {
    // examples/*.test.ts: the docs' test samples, run as they are.
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // The package tests (npm pack, installs) run on their own: npm run test:package; the
    // OpenClaw plugin test (the real OpenClaw CLI on Node 24) too: npm run test:openclaw.
    exclude: ["test/package/**", "test/openclaw/**", "**/node_modules/**"],
    // CLI processes spawned by tests (bin/hookbus.js) run the TypeScript sources, not a stale dist/.
    env: { HOOKBUS_CLI_SOURCE: "1" },
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
