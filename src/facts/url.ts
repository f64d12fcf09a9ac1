/**
 * URL facts: what a URL reaches, whatever its spelling. The URL is read with the WHATWG parser
 * (the one `fetch`, undici and browsers use), then the host is looked at again: an IP literal in
 * any spelling (ip.ts), a name decoded from punycode, a trailing dot dropped, a metadata or
 * local-only name, and a user-info part that dresses up as a host (`https://good.com@evil.com`
 * goes to evil.com). A text that does not parse is a fact too (`unparsed`), never left out.
 */
import { domainToUnicode } from "node:url";
import { z } from "zod";
import { INTERNAL_RANGES, ipFacts, type IpFacts, type IpRange } from "./ip.js";

/** Longer texts are not parsed (`unparsed: "too-long"`); browsers cap URLs near 2 MB, people at 2 KB. */
export const MAX_URL_CHARS = 65_536;

/** Names that reach the cloud's metadata service without an IP literal. */
const METADATA_NAMES = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.platformequinix.com",
]);

/** Name suffixes that only resolve inside a network (RFC 6761, 6762, 8375 and common practice). */
const LOCAL_SUFFIXES = [".local", ".internal", ".localdomain", ".home.arpa", ".lan", ".intranet"];

export type HostRange = IpRange | "local-name" | "single-label";

const HOST_RANGES = [
  "loopback",
  "private",
  "link-local",
  "metadata",
  "unspecified",
  "shared",
  "multicast",
  "broadcast",
  "reserved",
  "documentation",
  "local-name",
  "single-label",
] as const satisfies readonly HostRange[];

export const UrlFactSchema = z
  .object({
    text: z.string().describe("The URL as found (at most 256 characters kept)"),
    unparsed: z.enum(["not-a-url", "too-long"]).optional(),
    scheme: z.string().optional().describe("Lower case, no colon: https"),
    host: z.string().optional().describe("Lower case, punycode decoded, no trailing dot"),
    hostAscii: z.string().optional().describe("The host as it goes on the wire (punycode)"),
    hostKind: z.enum(["name", "ipv4", "ipv6", "none"]).optional(),
    ip: z
      .object({
        version: z.union([z.literal(4), z.literal(6)]),
        address: z.string(),
        embeddedIpv4: z.string().optional(),
      })
      .optional(),
    ranges: z.array(z.enum(HOST_RANGES)).describe("Why the host is not public; empty when it is"),
    internal: z
      .boolean()
      .describe("The host is loopback, private, link-local, metadata, local-only"),
    metadata: z.boolean().describe("The host is a cloud metadata service"),
    port: z.number().int().optional().describe("The port used: the scheme's default when none"),
    explicitPort: z.boolean(),
    userinfo: z.boolean().describe("The URL carries a user name or password"),
    userinfoLooksLikeHost: z.boolean().describe("`https://good.com@evil.com`: a decoy host"),
    querySize: z.number().int().describe("Characters after `?` (data smuggled in a query)"),
    queryParams: z.number().int(),
    pathLength: z.number().int(),
  })
  .strict();
export type UrlFact = z.infer<typeof UrlFactSchema>;

const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  http: 80,
  https: 443,
  ws: 80,
  wss: 443,
  ftp: 21,
  ssh: 22,
  sftp: 22,
  gopher: 70,
};

/** The facts of one URL text. Pure; bounded by MAX_URL_CHARS. */
export function urlFacts(text: string): UrlFact {
  const trimmed = text.trim();
  if (trimmed.length > MAX_URL_CHARS) return unparsedUrl(text, "too-long");
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return unparsedUrl(text, "not-a-url");
  }
  const scheme = url.protocol.replace(/:$/, "").toLowerCase();
  const hostAscii = hostOf(url);
  const ip = hostAscii === "" ? undefined : ipFacts(hostAscii);
  const host = ip?.address ?? nameOf(hostAscii);
  const ranges = hostRanges(host, ip);
  const facts: UrlFact = {
    text: text.slice(0, 256),
    scheme,
    host,
    hostAscii: ip?.address ?? hostAscii.replace(/\.+$/, ""),
    hostKind:
      hostAscii === "" ? "none" : ip === undefined ? "name" : ip.version === 4 ? "ipv4" : "ipv6",
    ranges,
    internal: ranges.some(isInternalRange),
    metadata: ranges.includes("metadata"),
    explicitPort: url.port !== "",
    userinfo: url.username !== "" || url.password !== "",
    userinfoLooksLikeHost: looksLikeHost(decodeSafely(url.username)),
    querySize: url.search.length > 0 ? url.search.length - 1 : 0,
    queryParams: [...url.searchParams.keys()].length,
    pathLength: url.pathname.length,
  };
  const port = url.port !== "" ? Number(url.port) : DEFAULT_PORTS[scheme];
  if (port !== undefined) facts.port = port;
  if (ip !== undefined) facts.ip = ipShape(ip);
  return facts;
}

function unparsedUrl(text: string, reason: "not-a-url" | "too-long"): UrlFact {
  return {
    text: text.slice(0, 256),
    unparsed: reason,
    ranges: [],
    internal: false,
    metadata: false,
    explicitPort: false,
    userinfo: false,
    userinfoLooksLikeHost: false,
    querySize: 0,
    queryParams: 0,
    pathLength: 0,
  };
}

/** The host without brackets, lower case, percent-decoded for the schemes WHATWG leaves opaque. */
function hostOf(url: URL): string {
  let host = url.hostname.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return decodeSafely(host);
}

/** A name's unicode form without its trailing dots (`example.com.` is example.com). */
function nameOf(ascii: string): string {
  const bare = ascii.replace(/\.+$/, "");
  const unicode = domainToUnicode(bare);
  return unicode === "" ? bare : unicode;
}

function hostRanges(host: string, ip: IpFacts | undefined): HostRange[] {
  if (ip !== undefined) return ip.ranges;
  if (host === "") return [];
  const ranges: HostRange[] = [];
  if (host === "localhost" || host.endsWith(".localhost")) ranges.push("loopback");
  if (LOOPBACK_NAMES.some((name) => host === name || host.endsWith(`.${name}`)))
    ranges.push("loopback");
  const embedded = wildcardDnsAddress(host);
  if (embedded !== undefined) for (const range of embedded.ranges) ranges.push(range);
  if (METADATA_NAMES.has(host)) ranges.push("metadata");
  if (LOCAL_SUFFIXES.some((suffix) => host.endsWith(suffix))) ranges.push("local-name");
  if (!host.includes(".") && host !== "localhost") ranges.push("single-label");
  return ranges;
}

/** Public names whose every subdomain resolves to 127.0.0.1. */
const LOOPBACK_NAMES = ["localtest.me", "lvh.me", "vcap.me", "lacolhost.com"];

/**
 * Wildcard DNS services answer with the address written in the name (`127.0.0.1.nip.io`,
 * `10-0-0-1.sslip.io`, `7f000001.nip.io`, `app.169.254.169.254.xip.io`): the host is that address.
 */
const WILDCARD_DNS =
  /(?:^|\.)((?:\d{1,3}[.-]){3}\d{1,3}|[0-9a-f]{8})\.(?:nip\.io|sslip\.io|xip\.io|traefik\.me|localh\.st)$/;

function wildcardDnsAddress(host: string): IpFacts | undefined {
  const match = WILDCARD_DNS.exec(host);
  if (match === null) return undefined;
  const written = match[1]!;
  const dotted = /^[0-9a-f]{8}$/.test(written) ? `0x${written}` : written.replace(/-/g, ".");
  return ipFacts(dotted);
}

function ipShape(ip: IpFacts): NonNullable<UrlFact["ip"]> {
  const shape: NonNullable<UrlFact["ip"]> = { version: ip.version, address: ip.address };
  if (ip.embeddedIpv4 !== undefined) shape.embeddedIpv4 = ip.embeddedIpv4;
  return shape;
}

/** `good.com`, `www.bank.example`, an IP literal: a user name that reads as a destination. */
function looksLikeHost(username: string): boolean {
  if (username === "") return false;
  return (
    ipFacts(username) !== undefined || /^[\p{L}\p{N}-]+(\.[\p{L}\p{N}-]+)+\.?$/u.test(username)
  );
}

function decodeSafely(text: string): string {
  if (!text.includes("%")) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `internal` counts every range but documentation (a test net reaches nothing). */
export function isInternalRange(range: HostRange): boolean {
  return range === "local-name" || range === "single-label" || INTERNAL_RANGES.has(range);
}
