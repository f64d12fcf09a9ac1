/**
 * Recipient facts: each recipient's domain under every way of writing an address, and
 * `allInternal` that holds only when every recipient is an internal domain or a subdomain of one.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recipientFacts, RecipientsFactSchema } from "../../../src/facts/index.js";

const internalDomains = ["example.com", "corp.example.org"];

describe("recipient domains", () => {
  it("reads the domain of every way of writing an address", () => {
    const facts = recipientFacts(
      [
        "Ann <ann@Example.COM>",
        '"Doe, John" <john@sales.example.com.>, bob@EXAMPLE.com;carol@corp.example.org',
        "mailto:dave@example.com?subject=hi",
        "<erin@example.com>",
      ],
      { internalDomains },
    );
    expect(facts.recipients.map((r) => r.domain)).toEqual([
      "example.com",
      "sales.example.com",
      "example.com",
      "corp.example.org",
      "example.com",
      "example.com",
    ]);
    expect(facts.allInternal).toBe(true);
    expect(facts.externalDomains).toEqual([]);
    expect(RecipientsFactSchema.parse(facts)).toEqual(facts);
  });

  it("decodes and encodes international domains to compare them in one form", () => {
    const facts = recipientFacts(["a@bücher.example", "b@xn--bcher-kva.example"], {
      internalDomains: ["BÜCHER.example"],
    });
    expect(facts.recipients.map((r) => r.domain)).toEqual(["bücher.example", "bücher.example"]);
    expect(facts.domains).toEqual(["xn--bcher-kva.example"]);
    expect(facts.allInternal).toBe(true);
  });

  it.each([
    ["evil@example.com.attacker.net", "a suffix that continues"],
    ["evil@attacker-example.com", "a name that ends like it"],
    ["evil@exаmple.com", "a Cyrillic а"],
    ["evil@example.co", "a shorter TLD"],
    ['"ann@example.com"@attacker.net', "an internal address quoted as a local part"],
    ["Ann <ann@example.com> <evil@attacker.net>", "a second angle address"],
    ["@example.com:evil@attacker.net", "a source route through an internal host"],
    ["ann@[192.0.2.1]", "a domain literal"],
    ["ann example.com", "no address at all"],
    ["#general", "a chat channel"],
  ])("%s is not internal (%s)", (recipient) => {
    const facts = recipientFacts(["ann@example.com", recipient], { internalDomains });
    expect(facts.allInternal).toBe(false);
    expect(facts.anyExternal).toBe(true);
  });

  it("is never allInternal with no recipient, or more than it reads", () => {
    expect(recipientFacts([], { internalDomains }).allInternal).toBe(false);
    const many = recipientFacts([Array(1001).fill("a@example.com").join(",")], { internalDomains });
    expect(many.truncated).toBe(true);
    expect(many.allInternal).toBe(false);
  });

  it("is false whenever any recipient is external, whatever the order and spelling", () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/);
    const internal = fc
      .tuple(
        label,
        fc.constantFrom("example.com", "corp.example.org", "a.example.com"),
        fc.boolean(),
      )
      .map(([local, domain, upper]) => `${local}@${upper ? domain.toUpperCase() : domain}`);
    const external = fc
      .tuple(
        label,
        fc.array(label, { minLength: 1, maxLength: 3 }),
        fc.constantFrom("net", "com", "io"),
      )
      .filter(([, labels, tld]) => !`${labels.join(".")}.${tld}`.endsWith("example.com"))
      .map(([local, labels, tld]) => `${local}@${labels.join(".")}.${tld}`);
    fc.assert(
      fc.property(
        fc.array(internal, { maxLength: 5 }),
        external,
        fc.nat(),
        (inside, outside, at) => {
          const list = [...inside];
          list.splice(at % (list.length + 1), 0, outside);
          expect(recipientFacts([list.join(", ")], { internalDomains }).allInternal).toBe(false);
          expect(recipientFacts(list, { internalDomains }).allInternal).toBe(false);
        },
      ),
    );
    fc.assert(
      fc.property(fc.array(internal, { minLength: 1, maxLength: 5 }), (inside) => {
        expect(recipientFacts(inside, { internalDomains }).allInternal).toBe(true);
      }),
    );
  });
});
