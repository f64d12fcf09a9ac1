/**
 * An adapter whose framework (an optional peer dependency) is not installed fails with
 * HOOKBUS_MISSING_PEER naming the package to install; any other load failure is not disguised as
 * a missing peer. `hookbus/pi` loads `@mariozechner/pi-ai` this way.
 */
import { describe, expect, it } from "vitest";
import { importPeer } from "../../../src/adapters/core/index.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { rejection } from "../../support/wait.js";

// A variable, so TypeScript does not resolve the specifier: the package does not exist.
const notInstalled = "@hookbus-test/no-such-framework";

describe("importPeer", () => {
  it("a peer that is not installed is HOOKBUS_MISSING_PEER with the install command", async () => {
    const error = await rejection(
      importPeer(notInstalled, "hookbus/pi", () => import(notInstalled)),
    );
    expect(isHookbusError(error, "HOOKBUS_MISSING_PEER"), String(error)).toBe(true);
    expect((error as Error).message).toBe(
      `hookbus/pi needs ${notInstalled}: npm install ${notInstalled}`,
    );
  });

  it("an installed peer loads; a failure that is not a missing module is passed on as it is", async () => {
    const piAi = await importPeer(
      "@mariozechner/pi-ai",
      "hookbus/pi",
      () => import("@mariozechner/pi-ai"),
    );
    expect(typeof piAi.createAssistantMessageEventStream).toBe("function");
    const broken = new Error("the module threw while loading");
    expect(await rejection(importPeer("x", "y", () => Promise.reject(broken)))).toBe(broken);
  });
});
