/**
 * Every limit of shell facts ends in `unparsed` with a code, never in an exception or in facts
 * that quietly leave part of the command out: 64 KB pathological commands of every shape, the
 * same shapes at the limits, and the total length of nested scripts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { pathologicalCommands } from "../../../../bench/support/facts-run.js";
import {
  DEFAULT_SHELL_LIMITS,
  loadShellParser,
  shellFacts,
  ShellFactsSchema,
} from "../../../../src/facts/shell/index.js";

const where = { home: "/home/dev", cwd: "/home/dev/app" };

beforeAll(async () => {
  await loadShellParser();
});

describe("shell facts limits", () => {
  it.each(Object.entries(pathologicalCommands(65_536, false)))(
    "a 64 KB %s command is unparsed (too-long, HOOKBUS_SHELL_LIMIT)",
    (_shape, command) => {
      const facts = shellFacts(command, where);
      expect(facts.unparsed).toMatchObject({ reason: "too-long", code: "HOOKBUS_SHELL_LIMIT" });
      expect(facts.commands).toEqual([]);
    },
  );

  it.each(Object.entries(pathologicalCommands(DEFAULT_SHELL_LIMITS.maxLength, true)))(
    "the %s shape at the limits gives valid facts or a coded unparsed, without throwing",
    (_shape, command) => {
      const facts = shellFacts(command, where);
      expect(ShellFactsSchema.parse(JSON.parse(JSON.stringify(facts)))).toEqual(facts);
      if (facts.unparsed !== undefined) {
        expect(["HOOKBUS_SHELL_LIMIT", "HOOKBUS_SHELL_UNPARSED"]).toContain(facts.unparsed.code);
      }
    },
  );

  it("counts the length of nested scripts against the same limit", () => {
    const inner = `echo ${"a".repeat(3_000)}`;
    const command = `sh -c '${inner}' && bash -c '${inner}'`;
    expect(shellFacts(command, where).unparsed).toBeUndefined();
    const facts = shellFacts(command, { ...where, limits: { maxLength: 9_000 } });
    expect(facts.unparsed).toMatchObject({ reason: "too-long", code: "HOOKBUS_SHELL_LIMIT" });
  });

  it("gives a plain command over a limit the parser path's answer", () => {
    const chain = Array.from({ length: 10 }, (_, i) => `c${i}`).join(" && ");
    expect(shellFacts(chain, { limits: { maxTreeDepth: 6 } }).unparsed?.reason).toBe("too-deep");
    expect(shellFacts(chain, { limits: { maxCommands: 9 } }).unparsed?.reason).toBe(
      "too-many-commands",
    );
    expect(shellFacts(chain, {}).programs).toHaveLength(10);
  });
});
