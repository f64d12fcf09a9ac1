import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  SUPPORTED_NODE_FIX,
  SUPPORTED_NODE_MAJOR,
  assertSupportedNode,
  unsupportedNode,
} from "../../../src/foundation/runtime.js";

const bin = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));

describe("the supported Node", () => {
  it("refuses Node 20 and 22 with HOOKBUS_UNSUPPORTED_NODE and says how to fix it", () => {
    for (const version of ["20.20.2", "22.12.0", "23.11.1"]) {
      const refusal = unsupportedNode(version);
      expect(refusal?.code).toBe("HOOKBUS_UNSUPPORTED_NODE");
      expect(refusal?.message).toContain(`this is Node ${version}`);
      expect(refusal?.message).toContain("bash scripts/setup.sh");
      expect(() => assertSupportedNode(version)).toThrow(/HOOKBUS_UNSUPPORTED_NODE|needs Node 24/);
    }
  });

  it("accepts Node 24 and newer", () => {
    for (const version of ["24.0.0", "24.22.3", "26.1.0"])
      expect(unsupportedNode(version)).toBeUndefined();
  });

  it("runs these tests on a supported Node (CI runs the suite on Node 24)", () => {
    expect(unsupportedNode()).toBeUndefined();
  });

  it("bin/hookbus.js checks the same major with the same words as src/foundation/runtime.ts", () => {
    const text = readFileSync(bin, "utf8");
    expect(text).toContain(`const SUPPORTED_NODE_MAJOR = ${SUPPORTED_NODE_MAJOR};`);
    const unescaped = text.replaceAll("\\n", "");
    for (const part of SUPPORTED_NODE_FIX.split(/(?<=\.tools\/bin )/))
      expect(unescaped).toContain(part);
  });

  it("the CLI started by an older Node exits 2 with the coded refusal, from dist/ or the sources", () => {
    // The running Node reports an old version, as Node 20 would: the check runs before any import.
    const fake =
      'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.20.2"})';
    for (const env of [{ HOOKBUS_CLI_SOURCE: "0" }, { HOOKBUS_CLI_SOURCE: "1" }]) {
      const run = spawnSync(process.execPath, ["--import", fake, bin, "--version"], {
        encoding: "utf8",
        env: { ...process.env, ...env },
      });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(
        "HOOKBUS_UNSUPPORTED_NODE: hookbus needs Node 24 or newer, this is Node 20.20.2",
      );
      expect(run.stdout).toBe("");
    }
  });

  it("main() refuses an older Node too (services start through it without bin/)", () => {
    const fake =
      'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"22.12.0"})';
    const script = `const { main } = await import(${JSON.stringify(new URL("../../../src/cli/main.ts", import.meta.url).href)}); process.exitCode = await main(["--version"]);`;
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", "--import", fake, "--input-type=module", "-e", script],
      {
        encoding: "utf8",
      },
    );
    expect(run.stderr).toContain("HOOKBUS_UNSUPPORTED_NODE");
    expect(run.status).toBe(2);
  });
});
