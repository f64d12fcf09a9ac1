/** docs/errors.md explains every error code to operators; it must list exactly the codes in src. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ErrorCodes, HookbusError, isHookbusError } from "../../../src/index.js";

const doc = readFileSync(
  fileURLToPath(new URL("../../../docs/errors.md", import.meta.url)),
  "utf8",
);

/** code → cells of its table row (without the code cell), for rows whose first cell is a code. */
function tableRows(markdown: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of markdown.split("\n")) {
    const match = /^\|\s*`(HOOKBUS_[A-Z0-9_]+)`\s*\|(.*)\|\s*$/.exec(line);
    if (match === null) continue;
    if (rows.has(match[1]!)) throw new Error(`docs/errors.md lists ${match[1]} twice`);
    rows.set(
      match[1]!,
      match[2]!.split("|").map((cell) => cell.trim()),
    );
  }
  return rows;
}

const rows = tableRows(doc);
const codes = Object.keys(ErrorCodes);

describe("docs/errors.md and ErrorCodes", () => {
  it("the table was found", () => {
    expect(rows.size).toBeGreaterThan(0);
  });

  it("every code in ErrorCodes has a row with a meaning and what to do", () => {
    const missing = codes.filter((code) => !rows.has(code));
    expect(missing, "add a row for each of these codes to docs/errors.md").toEqual([]);
    for (const code of codes) {
      const cells = rows.get(code)!;
      expect(cells, code).toHaveLength(2);
      expect(cells[0], `${code}: meaning`).not.toBe("");
      expect(cells[1], `${code}: what to do`).not.toBe("");
    }
  });

  it("the meaning column is the text of ErrorCodes", () => {
    for (const [code, meaning] of Object.entries(ErrorCodes))
      expect(rows.get(code)?.[0], code).toBe(meaning);
  });

  it("every HOOKBUS_* code mentioned anywhere in docs/errors.md exists", () => {
    const mentioned = new Set(doc.match(/HOOKBUS_[A-Z0-9_]+/g) ?? []);
    const unknown = [...mentioned].filter((code) => !Object.hasOwn(ErrorCodes, code));
    expect(unknown, "docs/errors.md names codes that src/errors.ts does not define").toEqual([]);
    expect([...rows.keys()].sort()).toEqual([...codes].sort());
  });

  it("HookbusError carries the code, details and a wire form", () => {
    const cause = new Error("root");
    const error = new HookbusError("HOOKBUS_UNKNOWN_HOOK", "unknown hook", { hook: "x" }, cause);
    expect(error).toBeInstanceOf(Error);
    expect(error.cause).toBe(cause);
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      code: "HOOKBUS_UNKNOWN_HOOK",
      message: "unknown hook",
      details: { hook: "x" },
    });
    expect(isHookbusError(error)).toBe(true);
    expect(isHookbusError(error, "HOOKBUS_INVALID_EVENT")).toBe(false);
    expect(isHookbusError(cause)).toBe(false);
    expect(new HookbusError("HOOKBUS_INVALID_EVENT", "m").details).toEqual({});
  });
});
