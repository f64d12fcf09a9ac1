/**
 * Recipient facts: where a message goes, by domain, and whether every recipient is internal.
 * Addresses come as `a@b`, `Name <a@b>`, `"Last, First" <a@b>`, `mailto:a@b`, lists split by
 * `,` or `;`, in any case, with trailing dots and in unicode or punycode. A rule that matches the
 * joined text (`like "*@example.com*"`) is fooled by `evil@example.com.attacker.net`; here a
 * domain is internal only when it IS an internal domain or a subdomain of one, compared in the
 * form the mail system uses (IDNA ASCII, lower case, no trailing dot).
 */
import { domainToASCII, domainToUnicode } from "node:url";
import { z } from "zod";

/** At most this many recipients are read; more make `truncated` true and `allInternal` false. */
export const MAX_RECIPIENTS = 1000;
/** A longer recipient text is not read (RFC 5321 caps a path at 256 octets). */
export const MAX_RECIPIENT_CHARS = 1024;

export const RecipientFactSchema = z
  .object({
    text: z.string().describe("The recipient as found (at most 256 characters kept)"),
    address: z.string().optional().describe("local@domain, domain lower case"),
    domain: z.string().optional().describe("Unicode, lower case, no trailing dot"),
    domainAscii: z.string().optional().describe("IDNA ASCII (punycode): the form compared"),
    internal: z.boolean(),
  })
  .strict();
export type RecipientFact = z.infer<typeof RecipientFactSchema>;

export const RecipientsFactSchema = z
  .object({
    recipients: z.array(RecipientFactSchema),
    domains: z.array(z.string()).describe("Distinct recipient domains (ASCII form)"),
    externalDomains: z.array(z.string()).describe("Distinct domains that are not internal"),
    allInternal: z
      .boolean()
      .describe("At least one recipient, and every one has an internal domain"),
    anyExternal: z.boolean().describe("Not allInternal: a recipient outside, or none readable"),
    truncated: z.boolean(),
  })
  .strict();
export type RecipientsFact = z.infer<typeof RecipientsFactSchema>;

export interface RecipientOptions {
  /** Internal domains: each matches itself and its subdomains. */
  internalDomains?: readonly string[];
}

/** The facts of every recipient in `texts` (each may hold a list). Pure and bounded. */
export function recipientFacts(
  texts: readonly string[],
  options: RecipientOptions = {},
): RecipientsFact {
  const internal = (options.internalDomains ?? []).map(asciiDomain).filter((d) => d !== "");
  const recipients: RecipientFact[] = [];
  let truncated = false;
  for (const text of texts) {
    for (const part of splitList(text)) {
      if (recipients.length >= MAX_RECIPIENTS) truncated = true;
      else recipients.push(recipientFact(part, internal));
    }
  }
  const domains = distinct(recipients.map((r) => r.domainAscii));
  const externalDomains = distinct(recipients.filter((r) => !r.internal).map((r) => r.domainAscii));
  const allInternal = !truncated && recipients.length > 0 && recipients.every((r) => r.internal);
  return {
    recipients,
    domains,
    externalDomains,
    allInternal,
    anyExternal: !allInternal,
    truncated,
  };
}

function recipientFact(text: string, internal: readonly string[]): RecipientFact {
  const fact: RecipientFact = { text: text.slice(0, 256), internal: false };
  const address = text.length > MAX_RECIPIENT_CHARS ? undefined : addressOf(text);
  if (address === undefined) return fact;
  const at = address.lastIndexOf("@");
  const domainAscii = asciiDomain(address.slice(at + 1));
  if (at <= 0 || domainAscii === "") return fact;
  fact.address = `${address.slice(0, at)}@${domainAscii}`;
  fact.domain = domainToUnicode(domainAscii) || domainAscii;
  fact.domainAscii = domainAscii;
  fact.internal = internal.some((d) => domainAscii === d || domainAscii.endsWith(`.${d}`));
  return fact;
}

/** The address of `Name <a@b>`, `<a@b>`, `mailto:a@b?subject=x` or a bare `a@b`. */
function addressOf(text: string): string | undefined {
  let rest = text.trim();
  const open = rest.lastIndexOf("<");
  if (open !== -1) {
    const close = rest.indexOf(">", open);
    if (close === -1) return undefined;
    rest = rest.slice(open + 1, close).trim();
  }
  if (/^mailto:/i.test(rest)) rest = decodeSafely(rest.slice("mailto:".length).split("?")[0]!);
  // A source route (`@relay:a@b`) names hosts a message passes through: the last part is the box.
  const colon = rest.lastIndexOf(":");
  if (rest.startsWith("@") && colon !== -1) rest = rest.slice(colon + 1);
  if (rest === "" || /\s/.test(rest) || !rest.includes("@")) return undefined;
  return rest;
}

/** IDNA ASCII, lower case, no trailing dots; "" when it is no valid domain. */
function asciiDomain(domain: string): string {
  const bare = domain.trim().replace(/\.+$/, "");
  if (bare === "" || bare.includes("@")) return "";
  // A domain literal (`[192.0.2.1]`) is kept as written, never internal by name.
  if (/^\[[^\]]+\]$/.test(bare)) return bare.toLowerCase();
  return domainToASCII(bare).replace(/\.+$/, "");
}

/** Split a list at `,` and `;` outside quotes and angle brackets. */
function splitList(text: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quoted = false;
  let angled = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && char === "<") angled = true;
    else if (!quoted && char === ">") angled = false;
    if (!quoted && !angled && (char === "," || char === ";")) {
      if (current.trim() !== "") parts.push(current.trim());
      current = "";
    } else current += char;
  }
  if (current.trim() !== "") parts.push(current.trim());
  return parts;
}

function distinct(values: readonly (string | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => v !== undefined))];
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
