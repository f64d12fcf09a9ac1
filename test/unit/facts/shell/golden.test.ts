/**
 * The facts of every command of the corpora, recorded once and compared on every run: a change to
 * how the tree is read (src/facts/shell/tree.ts) or to the plain-command path must leave every fact
 * as it was. Covers the everyday corpus, tricky bash forms (non-ASCII text, here-documents, syntax
 * errors), the pathological shapes of `npm run bench:facts`, and lowered limits.
 *
 * A deliberate change of facts re-records the file: `UPDATE_SHELL_GOLDEN=1 npx vitest run
 * test/unit/facts/shell/golden.test.ts`, then review the diff of corpus/golden.jsonl.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { pathologicalCommands } from "../../../../bench/support/facts-run.js";
import {
  DEFAULT_SHELL_LIMITS,
  loadShellParser,
  shellFacts,
  type ShellFactsOptions,
} from "../../../../src/facts/shell/index.js";

const GOLDEN = new URL("./corpus/golden.jsonl", import.meta.url);
const where = { home: "/home/dev", cwd: "/home/dev/app" };
const read = (name: string): string[] =>
  JSON.parse(readFileSync(new URL(`./corpus/${name}`, import.meta.url), "utf8")) as string[];

/** Large facts are kept as a digest: the file stays readable, and any change still shows. */
const INLINE_LIMIT = 4_000;

function recorded(command: string, options: ShellFactsOptions): unknown {
  const facts = shellFacts(command, options);
  const json = JSON.stringify(facts);
  if (json.length <= INLINE_LIMIT) return facts;
  const sha256 = createHash("sha256").update(json).digest("hex");
  return { sha256, commands: facts.commands.length, unparsed: facts.unparsed?.reason ?? null };
}

/** Every case, by a name that says what it is; pathological commands are named by their shape. */
function cases(): Map<string, { command: string; options: ShellFactsOptions }> {
  const out = new Map<string, { command: string; options: ShellFactsOptions }>();
  for (const command of read("commands.json"))
    out.set(`corpus: ${command}`, { command, options: where });
  for (const command of read("tricky.json")) {
    out.set(`tricky: ${command}`, { command, options: where });
    out.set(`tricky, no paths: ${command}`, { command, options: {} });
  }
  const sizes = [
    ["64 KB", pathologicalCommands(65_536, false)],
    ["at the limits", pathologicalCommands(DEFAULT_SHELL_LIMITS.maxLength, true)],
    ["2 KB", pathologicalCommands(2_048, true)],
  ] as const;
  for (const [size, set] of sizes) {
    for (const [shape, command] of Object.entries(set)) {
      out.set(`pathological ${size}: ${shape}`, { command, options: where });
    }
  }
  const lowered: [string, Partial<typeof DEFAULT_SHELL_LIMITS>][] = [
    ["maxTreeDepth 6", { maxTreeDepth: 6 }],
    ["maxCommands 3", { maxCommands: 3 }],
    ["maxNesting 1", { maxNesting: 1 }],
    ["maxTokens 20", { maxTokens: 20 }],
  ];
  for (const [name, limits] of lowered) {
    for (const command of read("tricky.json").slice(0, 25)) {
      out.set(`${name}: ${command}`, { command, options: { ...where, limits } });
    }
  }
  return out;
}

beforeAll(async () => {
  await loadShellParser();
});

describe("shell facts against the recorded golden file", () => {
  it("are identical for every recorded command", () => {
    const actual: Record<string, unknown> = {};
    for (const [name, { command, options }] of cases()) actual[name] = recorded(command, options);
    if (process.env.UPDATE_SHELL_GOLDEN === "1") {
      // JSON Lines, one case a line: a changed fact shows as that case's line in the diff.
      const lines = Object.entries(actual).map((entry) => `${JSON.stringify(entry)}\n`);
      writeFileSync(GOLDEN, lines.join(""));
    }
    const golden = Object.fromEntries(
      readFileSync(GOLDEN, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as [string, unknown]),
    );
    expect(Object.keys(actual).sort()).toEqual(Object.keys(golden).sort());
    for (const [name, facts] of Object.entries(actual)) expect(facts, name).toEqual(golden[name]);
  });
});
