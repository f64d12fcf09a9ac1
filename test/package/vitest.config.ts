/**
 * The package tests (`npm run test:package`, run by .ci/run after `npm test`): they pack the
 * package and install it into temporary projects as users and the Docker image do, so they take
 * longer than the rest and run apart from it.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/package/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    // Each file installs packages with npm: one at a time on the shared CI machine.
    fileParallelism: false,
  },
});
