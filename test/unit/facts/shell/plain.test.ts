/**
 * Plain commands skip the parser (src/facts/shell/plain.ts). The skip is only sound if it gives
 * exactly the facts the parser path gives: `cmd;` always takes the parser path, and its facts must
 * equal those of `cmd`.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadShellParser, shellFacts } from "../../../../src/facts/shell/index.js";

const where = { home: "/home/dev", cwd: "/home/dev/app" };

beforeAll(async () => {
  await loadShellParser();
});

const wordChars = fc.constantFrom(..."abcrmfgitnpsuod0123456789_./:@%+,-=".split(""));
const word = fc.string({ unit: wordChars, minLength: 1, maxLength: 12 });
const program = fc.constantFrom(
  "rm",
  "git",
  "npm",
  "curl",
  "sudo",
  "env",
  "xargs",
  "find",
  "python3",
  "bash",
  "nc",
  "scp",
  "timeout",
  "busybox",
  "shred",
  "dig",
);
const plain = fc
  .tuple(program, fc.array(word, { maxLength: 8 }))
  .map(([p, args]) => [p, ...args].join(" "));

describe("plain commands", () => {
  it("give the same facts with and without the parser", () => {
    fc.assert(
      fc.property(plain, (command) => {
        expect(shellFacts(command, where), command).toEqual(shellFacts(`${command};`, where));
      }),
      { numRuns: 800 },
    );
  });

  it("leave anything with shell syntax to the parser", () => {
    for (const command of ["a=1 rm x", "time rm -rf /", "rm ~", "rm *", "rm  -rf /"]) {
      expect(shellFacts(command, where).unparsed, command).toBeUndefined();
    }
    expect(shellFacts("rm ~", where).deletions[0]?.targets[0]?.class).toBe("home");
    expect(shellFacts("rm /*", where).targetsRoot).toBe(true);
  });
});
