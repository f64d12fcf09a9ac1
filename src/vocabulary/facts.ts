/**
 * What a tool call is about, in one shape across frameworks: the command a shell runs, the URL a
 * fetch reads, the files touched, the recipients of a message, a search query. Frameworks spell
 * these differently (`command`, `cmd`, `commands`; `path`, `file_path`, `filePath`), so a policy
 * reading `facts.command` holds under every adapter. Facts are read from the params as sent; a
 * value of the wrong type is left out rather than guessed.
 */
import type { ToolClass } from "./classes.js";
import type { McpToolName } from "./mcp.js";
import { toolVocabulary, type ClassifyOptions, type ToolVocabulary } from "./vocabulary.js";

export interface UrlFacts {
  href: string;
  /** Lower case, without the colon: `https`. */
  scheme: string;
  /** Lower case host name, without the port (IDNs as the URL parser gives them: punycode). */
  host: string;
}

export interface ToolFacts {
  name: string;
  class: ToolClass;
  mcp?: McpToolName;
  /** A shell command as one string (an argv array joined with spaces). */
  command?: string;
  /** The URL a fetch or browser tool is given, when it parses as a URL. */
  url?: UrlFacts;
  /** File paths the call names. */
  paths: string[];
  /** Who a message goes to. */
  recipients: string[];
  /** A search query. */
  query?: string;
}

const COMMAND_KEYS = ["command", "cmd", "commands", "code", "script"] as const;
const URL_KEYS = ["url", "uri", "href", "link"] as const;
const PATH_KEYS = [
  "path",
  "file_path",
  "filePath",
  "paths",
  "notebook_path",
  "source",
  "destination",
  "directory",
] as const;
const RECIPIENT_KEYS = ["to", "recipient", "recipients", "cc", "bcc", "channel", "target"] as const;
const QUERY_KEYS = ["query", "q", "search"] as const;

export function toolFacts(
  name: string,
  params: unknown,
  options: ClassifyOptions & { vocabulary?: ToolVocabulary } = {},
): ToolFacts {
  const identity = (options.vocabulary ?? toolVocabulary).classify(name, options);
  const record = isRecord(params) ? params : {};
  // The identity's fields listed, not `{ ...identity, paths, recipients }` (hot path:
  // foundation/hot-path.ts). Same key order.
  const facts = { name: identity.name, class: identity.class } as ToolFacts;
  if (identity.mcp !== undefined) facts.mcp = identity.mcp;
  const command = firstText(record, COMMAND_KEYS, " ");
  if (command !== undefined) facts.command = command;
  const url = parseUrl(firstText(record, URL_KEYS, undefined));
  if (url !== undefined) facts.url = url;
  facts.paths = texts(record, PATH_KEYS);
  facts.recipients = texts(record, RECIPIENT_KEYS);
  const query = firstText(record, QUERY_KEYS, undefined);
  if (query !== undefined) facts.query = query;
  return facts;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The first key holding a string (or, with `join`, an array of strings joined). */
function firstText(
  record: Record<string, unknown>,
  keys: readonly string[],
  join: string | undefined,
): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === "string") return value;
    if (join !== undefined && Array.isArray(value) && value.every((v) => typeof v === "string"))
      return value.join(join);
  }
  return undefined;
}

/** Every string under the keys, arrays of strings flattened. */
function texts(record: Record<string, unknown>, keys: readonly string[]): string[] {
  const out: string[] = [];
  for (const key of keys) {
    const value = record[key];
    if (typeof value === "string") out.push(value);
    else if (Array.isArray(value)) for (const v of value) if (typeof v === "string") out.push(v);
  }
  return out;
}

function parseUrl(text: string | undefined): UrlFacts | undefined {
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined; // not a URL: policies see no `url` and decide on that (the shipped ones refuse)
  }
  return {
    href: url.href,
    scheme: url.protocol.replace(/:$/, ""),
    host: url.hostname.toLowerCase(),
  };
}
