/**
 * The memo of shell facts (src/facts/shell/memo.ts): the same facts as without it, for every
 * option the facts depend on; frozen, so no caller can change what another caller is given; and
 * bounded.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createShellFactsMemo,
  loadShellParser,
  shellFacts,
} from "../../../../src/facts/shell/index.js";

const where = { home: "/home/dev", cwd: "/home/dev/app" };
const corpus = JSON.parse(
  readFileSync(new URL("./corpus/commands.json", import.meta.url), "utf8"),
) as string[];

beforeAll(async () => {
  await loadShellParser();
});

describe("the shell facts memo", () => {
  it("gives the facts shellFacts gives, first time and again", () => {
    const memo = createShellFactsMemo();
    for (let round = 0; round < 2; round++) {
      for (const command of corpus)
        expect(memo(command, where), command).toEqual(shellFacts(command, where));
    }
  });

  it("keeps apart the same command under different homes, directories and limits", () => {
    const memo = createShellFactsMemo();
    const command = "rm -rf ~/x ./y";
    const variants = [
      where,
      { home: "/root", cwd: "/home/dev/app" },
      { home: "/home/dev", cwd: "/srv" },
      { ...where, projectRoot: "/home/dev" },
      { ...where, limits: { maxCommands: 1 } },
      {},
    ];
    for (const options of variants) memo(command, options);
    for (const options of variants) {
      expect(memo(command, options), JSON.stringify(options)).toEqual(shellFacts(command, options));
    }
    expect(memo("a; b", { limits: { maxCommands: 1 } }).unparsed?.reason).toBe("too-many-commands");
    expect(memo("a; b").unparsed).toBeUndefined();
  });

  it("returns deeply frozen facts, so one caller cannot change another's", () => {
    const memo = createShellFactsMemo();
    const first = memo("rm -rf /", where);
    expect(() => {
      first.programs.push("ls");
    }).toThrow(TypeError);
    expect(() => {
      (first.deletions[0] as { recursive: boolean }).recursive = false;
    }).toThrow(TypeError);
    expect(() => {
      (first as { targetsRoot: boolean }).targetsRoot = false;
    }).toThrow(TypeError);
    expect(memo("rm -rf /", where).targetsRoot).toBe(true);
    expect(memo("rm -rf /", where).deletions[0]?.recursive).toBe(true);
  });

  it("holds at most its capacity, dropping the least recently used", () => {
    const memo = createShellFactsMemo({ capacity: 2 });
    const a = memo("echo a", where);
    const b = memo("echo b", where);
    expect(memo("echo a", where)).toBe(a); // a is now the most recently used
    memo("echo c", where); // over capacity: b goes
    expect(memo("echo a", where)).toBe(a);
    const again = memo("echo b", where);
    expect(again).not.toBe(b);
    expect(again).toEqual(b);
  });
});
