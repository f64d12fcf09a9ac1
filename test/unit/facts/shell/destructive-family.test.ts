/**
 * A family of equivalent destructive commands, spelt every way the generators can combine:
 * program quoting, flag spelling, blanks, wrappers, targets and containers (`sh -c`, `eval`,
 * `$(…)`, `base64 -d | sh`, `xargs`, a one-liner). No spelling may produce facts that miss the
 * recursive deletion of a place outside the project. And everyday commands are not flagged.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadShellParser, shellFacts, type ShellFacts } from "../../../../src/facts/shell/index.js";

const where = { home: "/home/dev", cwd: "/home/dev/app" };

beforeAll(async () => {
  await loadShellParser();
});

const program = fc.constantFrom(
  "rm",
  "\\rm",
  "'rm'",
  '"rm"',
  "r''m",
  "/bin/rm",
  "$'\\x72m'",
  "command rm",
);
const flags = fc.constantFrom(
  "-rf",
  "-fr",
  "-rvf",
  "-R -f",
  "-r -f -v",
  "--recursive --force",
  "-f --recursive",
  "-Rf",
  "-r",
);
const blank = fc.constantFrom(" ", "\t", "  ", " \\\n ");
const target = fc.constantFrom(
  "/",
  "/*",
  "~",
  "~/",
  "$HOME",
  '"$HOME"',
  "/home",
  "/etc",
  "/usr/*",
  "../..",
);
const wrapper = fc.constantFrom(
  "",
  "sudo ",
  "sudo -u root ",
  "env X=1 ",
  "nice -n 5 ",
  "timeout 30 ",
  "nohup ",
  "busybox ",
  "sudo env X=1 nice ",
);

const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

/** Ways to run a command line that keep its meaning. */
const containers: ((line: string) => string)[] = [
  (line) => line,
  (line) => `bash -c ${quote(line)}`,
  (line) =>
    `sh -c "${line.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("$", "\\$")}"`,
  (line) => `eval ${quote(line)}`,
  (line) => `(${line})`,
  (line) => `{ ${line}; }`,
  (line) => `true && ${line}`,
  (line) => `echo ${Buffer.from(line).toString("base64")} | base64 -d | sh`,
  (line) => `bash -c "$(echo ${quote(line)})"`,
  (line) => `f() { ${line}; }; f`,
  (line) => `python3 -c ${quote(`import os; os.system(${JSON.stringify(line)})`)}`,
  (line) => `awk ${quote(`BEGIN { system(${JSON.stringify(line)}) }`)}`,
  (line) => `bash <(echo ${quote(line)})`,
  (line) => `source <(echo ${Buffer.from(line).toString("base64")} | base64 -d)`,
  // After expansion bash removes no quotes and expands no `~`: only a plain line keeps its meaning.
  (line) => {
    const plain = line.replace(/^[^ \t]+/u, "rm");
    return /["'\\$~]/u.test(plain) ? line : `x=${quote(plain)}; $x`;
  },
];

const destructive = fc
  .tuple(wrapper, program, blank, flags, blank, target, fc.nat(containers.length - 1))
  .map(([w, p, b1, f, b2, t, c]) =>
    (containers[c] ?? ((x: string) => x))(`${w}${p}${b1}${f}${b2}${t}`),
  );

const othersDestructive = fc.constantFrom(
  "ls / | xargs rm -r -v -f",
  "echo cm0gLXJmIH4= | base64 -d | sh",
  `python3 -c "import shutil; shutil.rmtree('/home')"`,
  "sudo env X=1 nice rm -fr ~",
  'bash -c "$(echo rm -rf /)"',
  "find / -delete",
  "find ~ -exec rm -rf {} +",
  `perl -e 'system("rm -rf /")'`,
  `node -e "require('fs').rmSync('/', {recursive: true})"`,
  "x=/; rm -rf $x",
  "cd / && rm -rf *",
  "cd ~; rm -rf .",
  "cd $HOME && rm -rf -- *",
  "pushd /etc && rm -rf ./*",
  "find / -exec rm -f {} +",
  "sudo find ~ -type f -exec shred -u {} \\;",
);

/** What a rule needs to see: a recursive deletion, and a target that is not inside the project. */
function missesDeletion(facts: ShellFacts): boolean {
  if (facts.unparsed !== undefined) return false; // unparsed is held for approval: not missed
  const outside = facts.deleteTargetClasses.some((c) => c !== "project");
  return !(facts.deletesRecursively && outside);
}

describe("a family of equivalent destructive commands", () => {
  it("no spelling produces facts that miss the deletion", () => {
    fc.assert(
      fc.property(fc.oneof(destructive, othersDestructive), (command) => {
        const facts = shellFacts(command, where);
        expect(missesDeletion(facts), `${command}\n${JSON.stringify(facts.deletions)}`).toBe(false);
      }),
      { numRuns: 600 },
    );
  });

  it("no spelling parses as unparsed: the family is plain bash, so each gets real facts", () => {
    fc.assert(
      fc.property(destructive, (command) => {
        expect(shellFacts(command, where).unparsed, command).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});

describe("everyday commands", () => {
  it.each([
    "grep reboot notes.txt",
    "rm -rf ./dist",
    "rm -rf node_modules dist coverage",
    "git push origin main",
    "npm test",
    "npx vitest run test/unit",
    "find . -name '*.log' -print",
    "echo 'rm -rf /' >> notes.md",
    "cat README.md | grep -i install",
    "python3 -m pytest -q",
    "git log --oneline | head",
  ])("%s is not flagged as a deletion outside the project or a decoded feed", (command) => {
    const facts = shellFacts(command, where);
    expect(facts.unparsed).toBeUndefined();
    expect(facts.deleteTargetClasses.filter((c) => c !== "project")).toEqual([]);
    expect(facts.pipesIntoInterpreter).toBe(false);
    expect(facts.hasDangerousCall).toBe(false);
    expect(facts.elevated).toBe(false);
  });
});
