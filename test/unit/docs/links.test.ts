/**
 * The docs hold together: every relative link in the README, the CHANGELOG and docs/ points at a
 * file that exists, and docs/README.md (the index) lists every page of docs/.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../../../", import.meta.url).pathname;
const pages = readdirSync(`${root}docs`, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".md") && !f.startsWith("api"))
  .map((f) => `docs/${f}`);

function relativeLinks(doc: string): string[] {
  const text = readFileSync(join(root, doc), "utf8");
  const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
  return links.filter((l) => !/^[a-z]+:/.test(l) && !l.startsWith("#"));
}

describe("docs links", () => {
  it.each(["README.md", "CHANGELOG.md", ...pages])("%s links only to files that exist", (doc) => {
    const broken = relativeLinks(doc).filter((link) => {
      const target = join(root, dirname(doc), link.split("#")[0]!);
      return !existsSync(target);
    });
    expect(broken).toEqual([]);
  });

  it("docs/README.md lists every page of docs/", () => {
    const linked = new Set(
      relativeLinks("docs/README.md").map((l) => relative(root, join(root, "docs", l))),
    );
    const missing = pages.filter((p) => p !== "docs/README.md" && !linked.has(p));
    expect(missing).toEqual([]);
  });
});
