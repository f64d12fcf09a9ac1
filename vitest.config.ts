import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The package tests (npm pack, installs) run on their own: npm run test:package.
    exclude: ["test/package/**", "**/node_modules/**"],
    // CLI processes spawned by tests (bin/hookbus.js) run the TypeScript sources, not a stale dist/.
    env: { HOOKBUS_CLI_SOURCE: "1" },
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
