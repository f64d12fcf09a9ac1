export {
  parseFixture,
  FixtureCase,
  MAX_FIXTURE_FILE_BYTES,
  MAX_CASES_PER_FILE,
  MAX_HISTORY_PER_CASE,
  type Fixture,
} from "./fixture.js";
export { runPolicyTests, type CaseResult, type CaseSet, type Mismatch } from "./run.js";
export { formatTestReport, summarize, type TestSummary } from "./format.js";
