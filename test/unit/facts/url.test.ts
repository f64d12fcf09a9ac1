/**
 * URL facts under the spellings an attacker chooses: every IPv4 form inet_aton reads, IPv6
 * forms that embed an IPv4 address, metadata names, punycode, trailing dots and decoy user info.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ipFacts, urlFacts, UrlFactSchema } from "../../../src/facts/index.js";

/** Every spelling of one IPv4 address as 1 to 4 parts, each decimal, hex or octal. */
function spellings(bytes: readonly number[]): string[] {
  const n = ((bytes[0]! << 24) >>> 0) + (bytes[1]! << 16) + (bytes[2]! << 8) + bytes[3]!;
  const forms = (v: number) => [String(v), `0x${v.toString(16)}`, `0${v.toString(8)}`];
  const out: string[] = [];
  for (const a of forms(n)) out.push(a);
  for (const a of forms(bytes[0]!))
    for (const b of forms((bytes[1]! << 16) + (bytes[2]! << 8) + bytes[3]!)) out.push(`${a}.${b}`);
  for (const a of forms(bytes[0]!))
    for (const b of forms(bytes[1]!))
      for (const c of forms((bytes[2]! << 8) + bytes[3]!)) out.push(`${a}.${b}.${c}`);
  for (const a of forms(bytes[0]!))
    out.push(`${a}.${bytes[1]}.${bytes[2]}.0${bytes[3]!.toString(8)}`);
  return out;
}

describe("IP literals in every spelling", () => {
  it("reads every 1- to 4-part decimal, hex and octal spelling as the same address", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }),
        (bytes) => {
          for (const spelling of spellings(bytes))
            expect(ipFacts(spelling)?.address, spelling).toBe(bytes.join("."));
        },
      ),
    );
  });

  it.each([
    ["http://127.0.0.1/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f.1/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://[::1]/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://[::ffff:7f00:1]/", "loopback"],
    ["http://[64:ff9b::7f00:1]/", "loopback"],
    ["http://[2002:7f00:1::]/", "loopback"],
    ["http://0.0.0.0:8080/", "unspecified"],
    ["http://[::]/", "unspecified"],
    ["http://10.1.2.3/", "private"],
    ["http://172.31.255.255/", "private"],
    ["http://192.168.0.1/", "private"],
    ["http://[fd12::1]/", "private"],
    ["http://[fe80::1]/", "link-local"],
    ["http://169.254.169.254/latest/meta-data/", "metadata"],
    ["http://0xa9fea9fe/", "metadata"],
    ["http://[::ffff:169.254.169.254]/", "metadata"],
    ["http://[fd00:ec2::254]/", "metadata"],
    ["http://metadata.google.internal/computeMetadata/v1/", "metadata"],
    ["http://METADATA.GOOGLE.INTERNAL./", "metadata"],
    ["http://100.100.100.200/", "metadata"],
    ["http://localhost:3000/", "loopback"],
    ["http://app.localhost/", "loopback"],
    ["http://printer.local/", "local-name"],
    ["http://intranet/", "single-label"],
    ["redis://0x7f.1:6379/", "loopback"],
    ["http://127.0.0.1.nip.io/", "loopback"],
    ["http://app.10-0-0-1.sslip.io/", "private"],
    ["http://a9fea9fe.nip.io/latest/", "metadata"],
    ["http://api.lvh.me:3000/", "loopback"],
    ["http://１２７.０.０.１/", "loopback"],
    ["http://%31%32%37.0.0.1/", "loopback"],
    ["http://0/", "unspecified"],
  ])("%s is %s, and internal", (url, range) => {
    const facts = urlFacts(url);
    expect(facts.ranges).toContain(range);
    expect(facts.internal).toBe(true);
    expect(UrlFactSchema.parse(facts)).toEqual(facts);
  });

  it("calls a public address public", () => {
    for (const url of [
      "https://93.184.216.34/",
      "https://[2606:4700::1111]/",
      "https://example.com/",
    ]) {
      const facts = urlFacts(url);
      expect(facts.internal, url).toBe(false);
      expect(facts.ranges, url).toEqual([]);
    }
    // One past each private range's edge is public.
    for (const ip of ["172.32.0.1", "11.0.0.1", "192.169.0.1", "100.128.0.1", "169.253.0.1"])
      expect(ipFacts(ip)?.ranges, ip).toEqual([]);
  });

  it("reads an IPv6 zone id, which URLs refuse", () => {
    expect(ipFacts("fe80::1%eth0")?.ranges).toEqual(["link-local"]);
    expect(urlFacts("http://[fe80::1%25eth0]/").unparsed).toBe("not-a-url");
  });

  it("refuses what is not an IP literal rather than guessing", () => {
    for (const host of [
      "1.2.3.4.5",
      "256.1.1.1",
      "0x",
      "example.com",
      "1.2.3.0x1g",
      ":::",
      "1::2::3",
    ])
      if (host !== "0x") expect(ipFacts(host), host).toBeUndefined();
    expect(ipFacts("4294967296")).toBeUndefined(); // one past 255.255.255.255
    expect(ipFacts("4294967295")?.ranges).toContain("broadcast");
  });
});

describe("hosts and the rest of a URL", () => {
  it("decodes punycode, lower-cases, and drops trailing dots", () => {
    const facts = urlFacts("https://XN--BCHER-KVA.EXAMPLE./path");
    expect(facts.host).toBe("bücher.example");
    expect(facts.hostAscii).toBe("xn--bcher-kva.example");
    expect(urlFacts("https://Example.COM.../").host).toBe("example.com");
  });

  it("sees the decoy host in user info and reports the real one", () => {
    const facts = urlFacts("https://good.com@evil.com/login");
    expect(facts.host).toBe("evil.com");
    expect(facts.userinfo).toBe(true);
    expect(facts.userinfoLooksLikeHost).toBe(true);
    expect(urlFacts("https://good.com%40x@evil.com/").host).toBe("evil.com");
    expect(urlFacts("https://user:pw@example.com/").userinfoLooksLikeHost).toBe(false);
    // A backslash is a slash to the WHATWG parser: the host is evil.com, not good.com.
    expect(urlFacts("https://evil.com\\@good.com/").host).toBe("evil.com");
  });

  it("gives the port used and the query's size", () => {
    expect(urlFacts("https://example.com/").port).toBe(443);
    expect(urlFacts("http://example.com:8080/").port).toBe(8080);
    expect(urlFacts("http://example.com:8080/").explicitPort).toBe(true);
    const q = urlFacts("https://example.com/?a=1&b=" + "x".repeat(500));
    expect(q.querySize).toBe(506);
    expect(q.queryParams).toBe(2);
  });

  it("makes a text that is no URL a fact, and bounds its size", () => {
    expect(urlFacts("example.com/path")).toMatchObject({ unparsed: "not-a-url", internal: false });
    const long = urlFacts("https://example.com/" + "a".repeat(70_000));
    expect(long.unparsed).toBe("too-long");
    expect(long.text.length).toBe(256);
  });

  it("never throws and always fits its schema", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string()),
        (text) => {
          UrlFactSchema.parse(urlFacts(text));
        },
      ),
    );
  });
});

describe("properties of the host", () => {
  const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);
  const host = fc.array(label, { minLength: 2, maxLength: 4 }).map((labels) => labels.join("."));

  it("user info never changes the host, whatever it dresses up as", () => {
    const userinfo = fc.oneof(
      host,
      fc.constant("127.0.0.1"),
      fc.constant("user:pw"),
      host.map((h) => `${h}:443`),
    );
    fc.assert(
      fc.property(host, userinfo, (real, decoy) => {
        const facts = urlFacts(`https://${decoy}@${real}/path`);
        expect(facts.host).toBe(real);
        expect(facts.userinfo).toBe(true);
      }),
    );
  });

  it("case and trailing dots never change the host", () => {
    fc.assert(
      fc.property(host, fc.integer({ min: 0, max: 3 }), (name, dots) => {
        const spelled = `${name.toUpperCase()}${".".repeat(dots)}`;
        expect(urlFacts(`https://${spelled}/`).host).toBe(name);
      }),
    );
  });
});
