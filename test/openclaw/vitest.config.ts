/**
 * The OpenClaw plugin test (`npm run test:openclaw`): it runs the real OpenClaw CLI on Node 24,
 * installed by scripts/openclaw-setup.sh into .tools/, so it runs apart from `vitest run`.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/openclaw/**/*.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    env: { HOOKBUS_CLI_SOURCE: "1" },
  },
});
