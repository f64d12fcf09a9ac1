/**
 * IP literals in every spelling a resolver accepts, and the ranges that make a host internal.
 * `http://2130706433`, `0x7f.1`, `0177.0.0.1`, `[::ffff:127.0.0.1]`, `[::ffff:7f00:1]` and
 * `[64:ff9b::7f00:1]` are all the loopback address: an allowlist or an SSRF rule that compares
 * text misses them. Parsed here into bytes, then classified by range, with an IPv6 address that
 * embeds an IPv4 one (mapped, compatible, NAT64, 6to4) classified by the address it embeds.
 */

export type IpRange =
  | "loopback"
  | "private"
  | "link-local"
  | "metadata"
  | "unspecified"
  | "shared"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "documentation";

export interface IpFacts {
  version: 4 | 6;
  /** The canonical spelling: dotted quad, or RFC 5952 style compressed IPv6 (lower case). */
  address: string;
  /** For an IPv6 address that carries an IPv4 one: that address, dotted. */
  embeddedIpv4?: string;
  ranges: IpRange[];
}

/** Ranges a host in which is not on the public internet (or is the cloud's metadata service). */
export const INTERNAL_RANGES: ReadonlySet<IpRange> = new Set([
  "loopback",
  "private",
  "link-local",
  "metadata",
  "unspecified",
  "shared",
  "multicast",
  "broadcast",
  "reserved",
]);

/**
 * An IPv4 address as inet_aton and the WHATWG URL parser read one: 1 to 4 parts, each decimal,
 * `0x` hex or `0` octal, the last filling the remaining bytes (`127.1`, `0x7f000001`).
 */
export function parseIpv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop(); // `127.0.0.1.`
  if (parts.length === 0 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    const value = ipv4Number(part);
    if (value === undefined) return undefined;
    numbers.push(value);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  const bytes = [...numbers];
  for (let i = 3 - numbers.length; i >= 0; i--) bytes.push(Math.floor(last / 256 ** i) % 256);
  return bytes;
}

function ipv4Number(part: string): number | undefined {
  let digits = part;
  let radix = 10;
  if (/^0x/i.test(part)) {
    digits = part.slice(2);
    radix = 16;
    if (digits === "") return 0; // `0x` alone is zero for WHATWG
  } else if (part.length > 1 && part.startsWith("0")) {
    digits = part.slice(1);
    radix = 8;
  }
  const valid = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!valid.test(digits) || digits.length > 12) return undefined;
  return parseInt(digits, radix);
}

/** 16 bytes of an IPv6 address (brackets and a zone id allowed), or undefined. */
export function parseIpv6(text: string): number[] | undefined {
  let body = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const zone = body.indexOf("%");
  if (zone !== -1) body = body.slice(0, zone);
  if (body.length > 45 || !body.includes(":")) return undefined;
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [
    ...head,
    ...new Array<number>(halves.length === 2 ? missing : 0).fill(0),
    ...tail,
  ];
  return groups.flatMap((g) => [g >> 8, g & 255]);
}

/** 16-bit groups of one side of `::`; a dotted IPv4 tail counts as two groups. */
function groupsOf(side: string): number[] | undefined {
  if (side === "") return [];
  const parts = side.split(":");
  const groups: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (index === parts.length - 1 && part.includes(".")) {
      const v4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(part) ? parseIpv4(part) : undefined;
      if (v4 === undefined) return undefined;
      groups.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
    } else if (/^[0-9a-f]{1,4}$/i.test(part)) groups.push(parseInt(part, 16));
    else return undefined;
  }
  return groups;
}

/** Facts of a host that is an IP literal in any spelling, or undefined for a name. */
export function ipFacts(host: string): IpFacts | undefined {
  const v6 = host.includes(":") ? parseIpv6(host) : undefined;
  if (v6 !== undefined) return ipv6Facts(v6);
  const v4 = /^[0-9a-fx.]+$/i.test(host) ? parseIpv4(host) : undefined;
  if (v4 === undefined) return undefined;
  return { version: 4, address: v4.join("."), ranges: ipv4Ranges(v4) };
}

/** Metadata services: AWS, GCP, Azure, OpenStack (169.254.169.254), ECS, Alibaba, Oracle. */
const METADATA_V4 = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "192.0.0.192"]);

function ipv4Ranges(b: readonly number[]): IpRange[] {
  const [a, c, d] = [b[0]!, b[1]!, b[2]!];
  const ranges: IpRange[] = [];
  if (METADATA_V4.has(b.join("."))) ranges.push("metadata");
  if (a === 0) ranges.push("unspecified"); // 0.0.0.0 reaches this host's listeners on Linux
  if (a === 127) ranges.push("loopback");
  if (a === 10 || (a === 172 && c >= 16 && c <= 31) || (a === 192 && c === 168))
    ranges.push("private");
  if (a === 169 && c === 254) ranges.push("link-local");
  if (a === 100 && c >= 64 && c <= 127) ranges.push("shared");
  if (a >= 224 && a <= 239) ranges.push("multicast");
  if (b.every((x) => x === 255)) ranges.push("broadcast");
  else if (a >= 240 || (a === 198 && (c === 18 || c === 19)) || (a === 192 && c === 0 && d === 0))
    ranges.push("reserved");
  if ((a === 192 && c === 0 && d === 2) || (a === 198 && c === 51 && d === 100))
    ranges.push("documentation");
  if (a === 203 && c === 0 && d === 113) ranges.push("documentation");
  return ranges;
}

function ipv6Facts(bytes: readonly number[]): IpFacts {
  const address = ipv6Text(bytes);
  const embedded = embeddedIpv4(bytes);
  const ranges = new Set<IpRange>(embedded === undefined ? [] : ipv4Ranges(embedded));
  const first = bytes[0]!;
  if (bytes.every((x) => x === 0)) ranges.add("unspecified");
  if (bytes.slice(0, 15).every((x) => x === 0) && bytes[15] === 1) ranges.add("loopback");
  if ((first & 0xfe) === 0xfc) ranges.add("private"); // fc00::/7, unique local
  if (first === 0xfe && (bytes[1]! & 0xc0) === 0x80) ranges.add("link-local"); // fe80::/10
  if (first === 0xfe && (bytes[1]! & 0xc0) === 0xc0) ranges.add("private"); // fec0::/10, site-local
  if (first === 0xff) ranges.add("multicast");
  if (address === "fd00:ec2::254") ranges.add("metadata"); // AWS IMDS over IPv6
  if (first === 0x20 && bytes[1] === 0x01 && bytes[2] === 0x0d && bytes[3] === 0xb8)
    ranges.add("documentation");
  const facts: IpFacts = { version: 6, address, ranges: [...ranges] };
  if (embedded !== undefined) facts.embeddedIpv4 = embedded.join(".");
  return facts;
}

/** The IPv4 address an IPv6 one carries: mapped, compatible, NAT64 (64:ff9b::/96), 6to4. */
function embeddedIpv4(b: readonly number[]): number[] | undefined {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const last4 = b.slice(12, 16);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return last4; // ::ffff:a.b.c.d
  if (zeros(0, 12) && !zeros(12, 15)) return last4; // ::a.b.c.d (deprecated, still routed)
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return last4;
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6); // 2002:AABB:CCDD::/48
  return undefined;
}

/** RFC 5952: lower case, leading zeros dropped, the longest run of zero groups as `::`. */
function ipv6Text(bytes: readonly number[]): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start === -1) return hex.join(":");
  const head = hex.slice(0, best.start).join(":");
  const tail = hex.slice(best.start + best.length).join(":");
  return `${head}::${tail}`;
}
