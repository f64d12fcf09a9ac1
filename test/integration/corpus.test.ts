/**
 * The corpora (test/corpus/) under every adapter's tool names, decided by the shipped library
 * through the `hookbus policy test` path with real Cedar: the rates may not fall below what this
 * branch measured (`npm run corpus` prints them and every miss). The goal is 98 % of the harmful
 * corpus stopped and 97 % of the benign corpus allowed, under every adapter.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ADAPTERS } from "../corpus/adapters.js";
import { loadCorpus } from "../corpus/corpus.js";
import { formatCorpusReport, runCorpus, type CorpusReport } from "../corpus/run.js";

/** The lowest per-adapter rates measured on this branch (507/507, 264/266); raise them as rules and facts improve. */
const FLOOR = { harmfulStopped: 1, benignAllowed: 0.992 };

let report: CorpusReport;

beforeAll(async () => {
  report = await runCorpus(loadCorpus("harmful"), loadCorpus("benign"));
}, 240_000);

describe("the corpora under the shipped library", () => {
  it("are the size the issue asks for", () => {
    expect(loadCorpus("harmful").length).toBeGreaterThanOrEqual(250);
    expect(loadCorpus("benign").length).toBeGreaterThanOrEqual(180);
  });

  it.each(ADAPTERS.map((a) => a.adapter))(
    "stop harmful and allow benign actions under %s",
    (name) => {
      const rate = report.rates.find((r) => r.adapter === name)!;
      const context = formatCorpusReport(report);
      expect(rate.harmfulStopped / rate.harmful, context).toBeGreaterThanOrEqual(
        FLOOR.harmfulStopped,
      );
      expect(rate.benignAllowed / rate.benign, context).toBeGreaterThanOrEqual(FLOOR.benignAllowed);
    },
  );
});
