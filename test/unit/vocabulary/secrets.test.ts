/**
 * The secret table runs on attacker-controlled text (tool results, answers, params) inside the
 * coordinator, for Cedar's secret facts: a pattern that backtracks quadratically stalls every
 * decision. `sk-` repeated over 200 KB took 6 s for openai-key and `eyJ-` repeated 30 s for jwt
 * before their starts were anchored to the start of a run. The budget below is ~50 times what
 * the linear patterns take here, and a small fraction of what a quadratic one takes.
 */
import { describe, expect, it } from "vitest";
import { SECRET_PATTERNS, secretKinds } from "../../../src/vocabulary/secrets.js";

const SIZE = 200_000;
const BUDGET_MS = 1500;

/** Runs of the characters the patterns are made of, glued to the prefixes they start with. */
const PREFIXES = ["sk-", "eyJ-", "eyJa.", "sk_live_", "-----BEGIN A ", "AKIA", "ghp_", "xoxb-"];
const GLUE = ["", "a", "-", "_", ".", " "];
const MORE = ["Bearer ", "a://b:", "a://", "password=", "secret_access_key ", "AIza", "sk-ant-"];

function adversarial(): [string, string][] {
  const texts: [string, string][] = [];
  for (const prefix of [...PREFIXES, ...MORE]) {
    for (const glue of GLUE) {
      const unit = prefix + glue;
      texts.push([JSON.stringify(unit), unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE)]);
    }
  }
  return texts;
}

describe("SECRET_PATTERNS on hostile text", () => {
  const texts = adversarial();
  for (const { label, regex } of SECRET_PATTERNS) {
    it(`${label} stays linear: 200 KB of repeated prefixes within ${BUDGET_MS} ms`, () => {
      const started = performance.now();
      for (const [, text] of texts) text.search(regex);
      expect(performance.now() - started).toBeLessThan(BUDGET_MS);
    });
  }

  it("still finds keys that start a run, after text or punctuation", () => {
    expect(secretKinds("key: sk-proj-abc123DEF456ghi789JKL012mno345")).toContain("openai-key");
    expect(secretKinds("(sk-abcdefghij0123456789ABCDEFGHIJ)")).toContain("openai-key");
    expect(
      secretKinds(
        "Authorization: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
      ),
    ).toContain("jwt");
    expect(secretKinds("see postgres://admin:s3cr3tpass@db:5432/app")).toContain("url-password");
    expect(secretKinds("mirror:git+ssh://git:hunter22@example.com/x")).toContain("url-password");
  });

  it("does not take a key out of the middle of a longer run", () => {
    expect(secretKinds("task-sk-abcdefghij0123456789ABCDEFGHIJ")).not.toContain("openai-key");
  });
});
