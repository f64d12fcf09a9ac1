/**
 * `npm run corpus`: the harmful and benign corpora (test/corpus/) under every adapter's tool
 * names, decided by the shipped library; prints the rates per adapter and overall, then the misses.
 * Exit code 0 always: the floors are test/integration/corpus.test.ts's to hold.
 */
import { loadCorpus } from "../test/corpus/corpus.js";
import { formatCorpusReport, runCorpus } from "../test/corpus/run.js";

const report = await runCorpus(loadCorpus("harmful"), loadCorpus("benign"));
console.log(formatCorpusReport(report));
