/**
 * Plain commands skip the parser (src/facts/shell/plain.ts). The skip is only sound if it gives
 * exactly the facts the parser path gives: `cmd;` always takes the parser path, and its facts must
 * equal those of `cmd`, for single commands, pipelines and lists, with globs, `~` and quoted
 * words, under the default limits and lowered ones.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_SHELL_LIMITS,
  loadShellParser,
  shellFacts,
  type ShellFacts,
} from "../../../../src/facts/shell/index.js";
import { plainCommands } from "../../../../src/facts/shell/plain.js";

const where = { home: "/home/dev", cwd: "/home/dev/app" };

beforeAll(async () => {
  await loadShellParser();
});

const wordChars = fc.constantFrom(..."abcrmfgitnpsuod0123456789_./:@%+,-=~*?".split(""));
const quotedChars = fc.constantFrom(...' a|&;$"\\*~#()<>{}=`!x-'.split(""));
const word = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: wordChars, minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: quotedChars, maxLength: 8 }).map((s) => `'${s}'`) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: fc.constantFrom(..." a|&;'*~#()<>{}=x-".split("")), maxLength: 8 })
      .map((s) => `"${s}"`),
  },
  // `$`, backquote and `!` keep a double-quoted word on the parser path; an inner `"` or a final
  // backslash would leave it open (a syntax error, whose offset differs between the two texts).
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: quotedChars.filter((c) => c !== '"' && c !== "\\"), maxLength: 8 })
      .map((s) => `"${s}"`),
  },
);
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
  "cd",
  "ls",
  "echo",
  "cat",
  "sh",
  "base64",
  "local",
  "export",
  "unset",
  "time",
  "~/bin/tool",
  "~",
);
const simple = fc
  .tuple(program, fc.array(word, { maxLength: 6 }))
  .map(([p, args]) => [p, ...args].join(" "));
const separator = fc.constantFrom(" | ", " && ", " || ", "; ");
const plain = fc
  .tuple(simple, fc.array(fc.tuple(separator, simple), { maxLength: 4 }))
  .map(([first, rest]) => first + rest.map(([sep, cmd]) => sep + cmd).join(""));
const limits = fc.option(
  fc.record({
    maxCommands: fc.integer({ min: 1, max: 6 }),
    maxTreeDepth: fc.integer({ min: 4, max: 16 }),
  }),
  { nil: undefined },
);

/**
 * A quoted word left open (`"\``) is a syntax error on both paths, at an offset that differs by
 * the added `;`: the offset is not compared.
 */
function comparable(facts: ShellFacts): ShellFacts {
  if (facts.unparsed?.reason !== "syntax") return facts;
  const detail = facts.unparsed.detail.replace(/offset \d+/u, "offset N");
  return { ...facts, unparsed: { ...facts.unparsed, detail } };
}

describe("plain commands", () => {
  it("give the same facts with and without the parser", () => {
    fc.assert(
      fc.property(plain, limits, (command, lowered) => {
        const options = lowered === undefined ? where : { ...where, limits: lowered };
        const plainPath = comparable(shellFacts(command, options));
        expect(plainPath, command).toEqual(comparable(shellFacts(`${command};`, options)));
      }),
      { numRuns: 1500 },
    );
  });

  it("is the path most generated commands take, so the property above tests it", () => {
    const samples = fc.sample(plain, 500);
    const taken = samples.filter(
      (command) => plainCommands(command, [], where.home, DEFAULT_SHELL_LIMITS) !== undefined,
    );
    expect(taken.length).toBeGreaterThan(samples.length * 0.3);
  });

  it("leave anything with shell syntax to the parser", () => {
    for (const command of ["a=1 rm x", "time rm -rf /", "rm ~", "rm *", "rm  -rf /"]) {
      expect(shellFacts(command, where).unparsed, command).toBeUndefined();
    }
    expect(shellFacts("rm ~", where).deletions[0]?.targets[0]?.class).toBe("home");
    expect(shellFacts("rm /*", where).targetsRoot).toBe(true);
  });
});
