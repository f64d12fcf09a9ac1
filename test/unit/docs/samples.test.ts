/**
 * Every TypeScript sample in the README and docs/ is a file in examples/ that the example tests
 * run (issue 8: samples are files that run). A sample names its file just above the block
 * (`examples/NAME.ts`) and shows the file or an excerpt of it, verbatim, so a doc cannot drift
 * from the program that is tested. A block that is not a program (a value's shape) says so with
 * `<!-- not a program: … -->` on the line above it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../../", import.meta.url).pathname;
// docs/ and its folders (adapters/), but not the generated API reports.
const docs = [
  "README.md",
  ...readdirSync(`${root}docs`, { recursive: true, encoding: "utf8" })
    .filter((f) => !f.startsWith("api"))
    .map((f) => `docs/${f}`),
].filter((f) => f.endsWith(".md"));

interface Sample {
  doc: string;
  line: number;
  code: string;
  /** The lines just above the block. */
  lead: string;
}

function samples(doc: string): Sample[] {
  const lines = readFileSync(`${root}${doc}`, "utf8").split("\n");
  const found: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(ts|typescript|js|javascript|mjs|cjs)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j]!.trim() !== "```"; j++) body.push(lines[j]!.slice(indent));
    const lead = lines
      .slice(0, i)
      .filter((l) => l.trim() !== "")
      .slice(-3)
      .join("\n");
    found.push({ doc, line: i + 1, code: body.join("\n"), lead });
    i = j;
  }
  return found;
}

const all = docs.flatMap(samples);
const normalize = (text: string) => text.replace(/[ \t]+$/gm, "").trim();

describe("code samples in the README and docs/", () => {
  it("finds the samples (the scan itself works)", () => {
    expect(all.length).toBeGreaterThanOrEqual(8);
  });

  it.each(all.map((s) => [`${s.doc}:${s.line}`, s] as const))(
    "%s is (an excerpt of) the examples/ file it names",
    (_, sample) => {
      if (/<!-- not a program: .+ -->/.test(sample.lead)) return;
      const named = /examples\/([\w.-]+\.(?:ts|mts|cts|js|mjs|cjs))/.exec(sample.lead)?.[1];
      expect(
        named,
        `${sample.doc}:${sample.line} names its examples/ file above the block`,
      ).toBeDefined();
      const file = `${root}examples/${named!}`;
      expect(existsSync(file), file).toBe(true);
      expect(normalize(readFileSync(file, "utf8")), `${sample.doc}:${sample.line}`).toContain(
        normalize(sample.code),
      );
    },
  );
});
