import { describe, expect, it } from "vitest";
import { isHookbusError, mergeOutcomes } from "../../../src/index.js";
import { defaultPiiRedactor, piiRedactor, Redactor } from "../../../services/policies/index.js";
import { verdictOf } from "./helpers.js";

const redactor = new Redactor();
const redact = (text: string) => redactor.redact(text).text;

describe("pii-redactor: emails", () => {
  it("redacts addresses in prose, brackets, mailto links and URL query strings", () => {
    expect(redact("Contact alice@example.com or <bob.smith+tag@mail.example.co.uk>.")).toBe(
      "Contact [email] or <[email]>.",
    );
    expect(redact("mailto:carol@example.org")).toBe("mailto:[email]");
    expect(redact("https://example.com/unsubscribe?email=dave@example.net&x=1")).toBe(
      "https://example.com/unsubscribe?email=[email]&x=1",
    );
    expect(redact('{"owner":"erin@example.io"}')).toBe('{"owner":"[email]"}');
  });

  it("leaves email-looking text in a URL path, package specs and handles alone", () => {
    const text =
      "see https://gitlab.example.com/users/alice@example.com/activity, " +
      "https://cdn.jsdelivr.net/npm/lodash@4.17.21/lodash.min.js, npm i react@18.2.0, @alice on social";
    expect(redact(text)).toBe(text);
  });

  it("does not take a@b or user@localhost for an address", () => {
    expect(redact("a@b and user@localhost")).toBe("a@b and user@localhost");
  });
});

describe("pii-redactor: card numbers", () => {
  it("redacts Luhn-valid card numbers, grouped or not", () => {
    expect(redact("Visa 4111 1111 1111 1111, MC 5555-5555-5555-4444, Amex 378282246310005.")).toBe(
      "Visa [card], MC [card], Amex [card].",
    );
  });

  it("does not redact a 16-digit number that fails Luhn, or other long numbers", () => {
    const text =
      "Visa-like 4111111111111112, grouped 4111 1111 1111 1112, order 1234567812345678, ts 1700000000123";
    expect(redact(text)).toBe(text);
  });

  it("finds a card inside a longer run of digit groups", () => {
    expect(redact("ref 12 4111 1111 1111 1111")).toBe("ref 12 [card]");
  });
});

describe("pii-redactor: phone numbers", () => {
  it("redacts US numbers in several formats and international numbers", () => {
    expect(
      redact(
        "Call (212) 736-5000, 212.736.5000, 212-736-5000, 1-212-736-5000, +1 415 555 2671, +44 20 7183 8750 or +33 1 42 68 53 00.",
      ),
    ).toBe("Call [phone], [phone], [phone], [phone], [phone], [phone] or [phone].");
  });

  it("finds every number of a list, separated by spaces, commas or semicolons", () => {
    expect(redact("(212) 736-5000 (212) 736-5001; +33 1 42 68 53 00, +33 1 42 68 53 01")).toBe(
      "[phone] [phone]; [phone], [phone]",
    );
  });

  it("redacts the number and leaves an extension word", () => {
    expect(redact("desk: 212-736-5000 ext. 12")).toBe("desk: [phone] ext. 12");
  });

  it("recognises national formats of the configured countries only", () => {
    const uk = "London 020 7183 8750";
    expect(redact(uk)).toBe(uk); // US only by default
    expect(new Redactor({ phoneCountries: ["GB"] }).redact(uk).text).toBe("London [phone]");
  });

  it("leaves dates, versions, amounts, short ids and timestamps alone", () => {
    const text =
      "On 2024-01-15 v1.2.3 cost $1,234.56 (id 12345678, ts 1700000000, pi 3.14159265358979).";
    expect(redact(text)).toBe(text);
  });
});

describe("pii-redactor: secrets", () => {
  it.each([
    ["AKIAIOSFODNN7EXAMPLE", "[secret:aws-access-key]"],
    ["ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "[secret:github-token]"],
    [`github_pat_11ABCDEFG0123456789abc_${"x".repeat(59)}`, "[secret:github-token]"],
    ["xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx", "[secret:slack-token]"],
    ["https://hooks.slack.com/services/T000/B000/XXXXXXXX", "[secret:slack-webhook]"],
    ["sk-proj-abc123DEF456ghi789JKL012mno345", "[secret:openai-key]"],
    ["sk-abcdefghij0123456789ABCDEFGHIJ", "[secret:openai-key]"],
    ["sk-ant-api03-abcdefghij0123456789XYZ", "[secret:anthropic-key]"],
    ["sk_live_abcdefghij0123456789", "[secret:stripe-key]"],
    ["AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "[secret:google-api-key]"],
    [
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      "[secret:jwt]",
    ],
  ])("redacts %s", (secret, placeholder) => {
    expect(redact(`key: ${secret} end`)).toBe(`key: ${placeholder} end`);
  });

  it("keeps the context of bearer tokens, AWS secret keys, URL passwords and credential assignments", () => {
    expect(redact("Authorization: Bearer abcdefghijklmnop1234567890")).toBe(
      "Authorization: Bearer [secret:bearer-token]",
    );
    expect(redact("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")).toBe(
      "aws_secret_access_key = [secret:aws-secret-key]",
    );
    expect(redact("postgres://admin:s3cr3tpass@db.internal:5432/app")).toBe(
      "postgres://admin:[secret:url-password]@db.internal:5432/app",
    );
    expect(redact('{"password": "hunter2!x"}')).toBe('{"password": "[secret:credential]"}');
  });

  it("redacts PEM private keys, whole or truncated, but not certificates or public keys", () => {
    const key =
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq83=\n-----END RSA PRIVATE KEY-----";
    expect(redact(`before\n${key}\nafter`)).toBe("before\n[secret:private-key]\nafter");
    expect(redact("x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk")).toBe(
      "x [secret:private-key]",
    );
    const cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
    const pub = "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----";
    expect(redact(cert)).toBe(cert);
    expect(redact(pub)).toBe(pub);
  });

  it("does not take prose or slugs for keys", () => {
    const text =
      "the task-runner and sk-learn-style-hyphenated-slug-example, Bearer token, password: short";
    expect(redact(text)).toBe(text);
  });
});

describe("pii-redactor: text without PII", () => {
  it("leaves ordinary text, code and JSON untouched", () => {
    for (const text of [
      "The quarterly report is attached. Revenue grew 12% to 4.5 million.",
      "function add(a, b) { return a + b; } // 2 + 2 = 4",
      '{"status":200,"items":[1,2,3],"next":"https://api.example.com/v1/items?page=2"}',
      "",
    ]) {
      expect(redactor.redact(text)).toEqual({ text, findings: [] });
    }
  });

  it("reports each finding with its kind, label and position", () => {
    const { findings } = redactor.redact("a@example.com AKIAIOSFODNN7EXAMPLE");
    expect(findings).toEqual([
      { start: 0, end: 13, kind: "email", label: "email", placeholder: "[email]" },
      {
        start: 14,
        end: 34,
        kind: "secret",
        label: "aws-access-key",
        placeholder: "[secret:aws-access-key]",
      },
    ]);
  });
});

describe("pii-redactor: configuration", () => {
  it("looks only for the configured kinds", () => {
    const r = new Redactor({ kinds: ["email"] });
    expect(r.redact("a@example.com 4111111111111111 AKIAIOSFODNN7EXAMPLE").text).toBe(
      "[email] 4111111111111111 AKIAIOSFODNN7EXAMPLE",
    );
  });

  it("adds extra patterns with their own labels", () => {
    const r = new Redactor({ extraPatterns: [{ label: "employee-id", pattern: /\bEMP-\d{6}\b/ }] });
    expect(r.redact("EMP-123456 and EMP-654321").text).toBe("[employee-id] and [employee-id]");
    // Also when the built-in kinds are narrowed.
    const only = new Redactor({
      kinds: ["email"],
      extraPatterns: [{ label: "ticket", pattern: "T-\\d+" }],
    });
    expect(only.redact("T-42 AKIAIOSFODNN7EXAMPLE").text).toBe("[ticket] AKIAIOSFODNN7EXAMPLE");
  });

  it.each([
    [{ kinds: ["ssn"] }, /kinds must be/],
    [{ phoneCountries: ["usa"] }, /phoneCountries/],
    [{ extraPatterns: [{ label: "Bad Label", pattern: /x/ }] }, /label/],
    [{ objectResults: "maybe" }, /objectResults/],
  ])("rejects %j", (options, message) => {
    let error: unknown;
    try {
      piiRedactor(options as never);
    } catch (e) {
      error = e;
    }
    expect(isHookbusError(error, "HOOKBUS_INVALID_POLICY")).toBe(true);
    expect((error as Error).message).toMatch(message);
  });
});

const toolResult = (result: unknown) => ({
  toolName: "crm_lookup",
  toolCallId: "t1",
  params: {},
  result,
  isError: false,
});

describe("pii-redactor policy: before_tool_result", () => {
  it("redacts a string result into content", async () => {
    expect(
      await verdictOf(defaultPiiRedactor, "before_tool_result", toolResult("mail a@example.com")),
    ).toEqual({ content: "mail [email]" });
  });

  it("redacts text parts and keeps other parts as they are", async () => {
    const image = { type: "image", source: { data: "aGVsbG8=" } };
    expect(
      await verdictOf(
        defaultPiiRedactor,
        "before_tool_result",
        toolResult([
          { type: "text", text: "card 4111 1111 1111 1111" },
          image,
          { type: "text", text: "ok" },
        ]),
      ),
    ).toEqual({
      content: [{ type: "text", text: "card [card]" }, image, { type: "text", text: "ok" }],
    });
  });

  it("redacts an MCP-style {content: [...]} result", async () => {
    expect(
      await verdictOf(
        defaultPiiRedactor,
        "before_tool_result",
        toolResult({ content: [{ type: "text", text: "call +1 415 555 2671" }], isError: false }),
      ),
    ).toEqual({ content: [{ type: "text", text: "call [phone]" }] });
  });

  it("redacts the string leaves of an object result into JSON text, or ignores objects when configured", async () => {
    const result = { user: { email: "a@example.com", visits: 3 }, note: "fine" };
    expect(await verdictOf(defaultPiiRedactor, "before_tool_result", toolResult(result))).toEqual({
      content: JSON.stringify({ user: { email: "[email]", visits: 3 }, note: "fine" }),
    });
    expect(
      await verdictOf(
        piiRedactor({ objectResults: "ignore" }),
        "before_tool_result",
        toolResult(result),
      ),
    ).toBeUndefined();
  });

  it("detects a private key inside JSON (on the decoded string, not the escaped JSON)", async () => {
    const result = {
      file: "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n",
    };
    expect(await verdictOf(defaultPiiRedactor, "before_tool_result", toolResult(result))).toEqual({
      content: JSON.stringify({ file: "[secret:private-key]\n" }),
    });
  });

  it("returns nothing when nothing was found, or when there is no result", async () => {
    for (const result of [
      "all good",
      [{ type: "text", text: "fine" }],
      { a: 1, b: "x" },
      undefined,
    ]) {
      expect(
        await verdictOf(defaultPiiRedactor, "before_tool_result", toolResult(result)),
      ).toBeUndefined();
    }
  });
});

describe("pii-redactor policy: before_response_emit", () => {
  it("returns content and allContent, both redacted, in one verdict", async () => {
    const event = {
      content: "Your key is AKIAIOSFODNN7EXAMPLE",
      allContent: ["Looking it up for a@example.com", "Your key is AKIAIOSFODNN7EXAMPLE"],
    };
    const verdict = await verdictOf(defaultPiiRedactor, "before_response_emit", event);
    expect(verdict).toEqual({
      content: "Your key is [secret:aws-access-key]",
      allContent: ["Looking it up for [email]", "Your key is [secret:aws-access-key]"],
    });
    // The merge keeps both, and a lower-priority policy can no longer change either.
    const { decision } = mergeOutcomes("before_response_emit", event, [
      { policy: "pii-redactor", priority: 50, status: "ok", verdict },
      { policy: "other", priority: 10, status: "ok", verdict: { allContent: ["leak", "leak"] } },
    ]);
    expect(decision).toMatchObject({ outcome: "modify", ...verdict });
  });

  it("redacts earlier turns even when the final text is clean", async () => {
    expect(
      await verdictOf(defaultPiiRedactor, "before_response_emit", {
        content: "Done.",
        allContent: ["Emailing a@example.com", "Done."],
      }),
    ).toEqual({ content: "Done.", allContent: ["Emailing [email]", "Done."] });
  });

  it("returns nothing for a clean response", async () => {
    expect(
      await verdictOf(defaultPiiRedactor, "before_response_emit", {
        content: "All set.",
        allContent: ["All set."],
      }),
    ).toBeUndefined();
  });
});

describe("pii-redactor: cost on hostile input", () => {
  // The word cases took tens of seconds to minutes with unbounded candidate patterns. Digit-dense
  // text is inherently costlier (the phone validator, ~10 µs per character): 10 KB here.
  it.each([
    ["one long word", "a".repeat(200_000)],
    ["dotted word", "a.".repeat(100_000)],
    [
      "base64 blob",
      Buffer.from(Array.from({ length: 150_000 }, (_, i) => i % 251)).toString("base64"),
    ],
    ["at signs", "a@".repeat(50_000)],
    ["digit groups", "1 ".repeat(5_000)],
    ["digit pairs", "12 ".repeat(3_000)],
  ])("scans %s in linear time", (_name, text) => {
    const started = performance.now();
    redactor.redact(text);
    // Linear runs take ~0.1–0.5 s idle; the super-linear patterns this guards against took tens
    // of seconds. 10 s holds on a loaded 2-core machine and still catches them.
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
