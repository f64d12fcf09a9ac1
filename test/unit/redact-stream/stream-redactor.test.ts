/**
 * The streaming redactor against the whole-text redaction (oracle.ts: the secret detectors run
 * over the whole text at once). Whatever the chunking, what the stream shows adds up to the
 * whole-text redaction, and at every moment what it has shown is a prefix of it: a character the
 * whole-text redaction removes is never shown, not even before the rest of its secret arrived.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compileStreamRules,
  EDGE_RULES,
  redactText,
  StreamRedactor,
  type StreamRule,
} from "../../../src/redact-stream/index.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { wholeTextRedaction } from "./oracle.js";
import { prose, SECRETS, textWith } from "./secrets-arbitrary.js";

const compiled = compileStreamRules(EDGE_RULES);
const KINDS = Object.keys(SECRETS);

/** Streams `text` cut at `cuts`; checks the shown prefix and the hold-back after every delta. */
function streamed(text: string, cuts: readonly number[], expected: string): string {
  const redactor = new StreamRedactor(compiled);
  let shown = "";
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    shown += redactor.push(text.slice(from, cut));
    from = cut;
    if (!expected.startsWith(shown)) throw new Error(`shown too early: ${JSON.stringify(shown)}`);
    expect(redactor.held).toBeLessThanOrEqual(compiled.holdBack);
  }
  return shown + redactor.end();
}

const chunking = (text: string) =>
  fc
    .uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 60 })
    .map((cuts) => cuts.sort((a, b) => a - b));

describe("the streaming redactor", () => {
  it("every kind of secret: each detector's find is replaced, at every split offset", () => {
    for (const kind of KINDS) {
      fc.assert(
        fc.property(textWith([kind], { minLength: 1, maxLength: 2 }), (text) => {
          const whole = wholeTextRedaction(text);
          expect(redactText(compiled, text)).toBe(whole.text);
          for (let cut = 0; cut <= text.length; cut++) {
            expect(streamed(text, [cut], whole.text)).toBe(whole.text);
          }
          for (const removed of whole.removed) expect(whole.text).not.toContain(removed);
        }),
        { numRuns: 10 },
      );
    }
  });

  it("every secret kind mixed, random chunkings (one character at a time included)", () => {
    const text = textWith(KINDS, { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(
        text.chain((t) => fc.tuple(fc.constant(t), chunking(t))),
        ([t, cuts]) => {
          const whole = wholeTextRedaction(t);
          expect(streamed(t, cuts, whole.text)).toBe(whole.text);
          const single = Array.from({ length: t.length }, (_, i) => i);
          expect(streamed(t, single, whole.text)).toBe(whole.text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the inserted secret itself never shows, whatever the split", () => {
    for (const kind of KINDS) {
      fc.assert(
        fc.property(prose, SECRETS[kind]!, prose, fc.nat(), (before, secret, after, seed) => {
          const text = `${before} ${secret} ${after}`;
          const cut = before.length + 1 + (seed % (secret.length + 1));
          const shown = streamed(text, [cut], wholeTextRedaction(text).text);
          const body = secretBody(kind, secret);
          expect(shown).not.toContain(body);
        }),
        { numRuns: 50 },
      );
    }
  });

  it("a token longer than its window is redacted to its last character", () => {
    const key = `sk-proj-1${"a".repeat(5000)}`;
    const expected = "key [secret:openai-key] done";
    expect(streamed(`key ${key} done`, [9, 300, 301, 4000], expected)).toBe(expected);
  });

  it("a PEM block of any length is one placeholder, and an unfinished one runs to the end", () => {
    const body = "MIIE".padEnd(20_000, "ab/+\n");
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`;
    const cuts = [5, 40, 10_000, 20_040, 20_060];
    const whole = "a [secret:private-key] b";
    expect(streamed(`a ${pem} b`, cuts, whole)).toBe(whole);
    const unfinished = "a [secret:private-key]";
    expect(streamed(`a ${pem.slice(0, 15_000)}`, cuts.slice(0, 2), unfinished)).toBe(unfinished);
  });

  it("holds back only a start's few characters in prose, and nothing kept grows with the answer", () => {
    const redactor = new StreamRedactor(compiled);
    const answer = "The build passed on the second try; see the log for details. ".repeat(20_000);
    let shown = 0;
    let maxHeld = 0;
    for (let at = 0; at < answer.length; at += 7) {
      shown += redactor.push(answer.slice(at, at + 7)).length;
      maxHeld = Math.max(maxHeld, redactor.held);
    }
    // The longest start is an email's local part and its `@`: 65 characters.
    expect(maxHeld).toBeLessThanOrEqual(65);
    expect(shown).toBeGreaterThanOrEqual(answer.length - 65);
  });

  it("refuses a rule it cannot bound, with a coded error", () => {
    const base: StreamRule = {
      label: "ticket",
      placeholder: "[ticket]",
      regex: /T-\d+/,
      start: /T-/,
      startLength: 2,
      maxLength: 32,
    };
    for (const rule of [
      { ...base, maxLength: 5000 },
      { ...base, maxLength: Number.POSITIVE_INFINITY },
      { ...base, startLength: 64 },
      { ...base, start: /T?/ },
      { ...base, start: /(T)-/ },
      { ...base, regex: /\d*/ },
      { ...base, start: /t-/i },
    ]) {
      let error: unknown;
      try {
        compileStreamRules([rule]);
      } catch (e) {
        error = e;
      }
      expect(isHookbusError(error, "HOOKBUS_STREAM_RULE_INVALID"), String(error)).toBe(true);
    }
    expect(compileStreamRules([base]).holdBack).toBe(32);
  });
});

/** The part of a generated secret the detector removes (without its `password=` context). */
function secretBody(kind: string, secret: string): string {
  if (kind === "credential") return secret.slice("password=".length);
  if (kind === "bearer-token") return secret.slice("Authorization: Bearer ".length);
  if (kind === "aws-secret-key") return secret.slice(-41, -1);
  if (kind === "url-password") return `:${secret.split(":")[2]!}`;
  return secret;
}
