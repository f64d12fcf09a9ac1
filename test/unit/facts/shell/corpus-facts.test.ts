/**
 * The harmful corpus's shell entries that name facts (test/corpus/harmful.json, "facts") get
 * them from the detectors: a new spelling of an attack that a detector misses fails here, apart
 * from what the library's rules make of the facts.
 */
import { beforeAll, expect, it } from "vitest";
import { loadShellParser } from "../../../../src/facts/shell/index.js";
import { loadCorpus } from "../../../corpus/corpus.js";
import { missingFacts } from "../../../corpus/run.js";

beforeAll(async () => {
  await loadShellParser();
});

const entries = loadCorpus("harmful").filter((e) => e.facts.length > 0);

it("names facts for most shell entries", () => {
  expect(entries.length).toBeGreaterThan(150);
});

it.each(entries.map((e) => [e.id, e] as const))("%s gets the facts it names", (_id, entry) => {
  expect(missingFacts(entry)).toEqual([]);
});
