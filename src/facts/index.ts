/**
 * One fact set for a call (issue 30, items 2 and 5): for each tool the call is about, its class,
 * the commands, URLs, paths, recipients and secrets its parameters hold wherever they nest, and
 * a summary of booleans and sets a Cedar rule can test without any/all over sets. Pure and
 * bounded; the coordinator computes it once and hands the same JSON to Cedar, workers, the
 * record and replay. Shell commands are parsed by an injected function (src/facts/shell/, which
 * lands separately): its output goes in each tool's `shell` slot, one entry per command.
 */
import { z } from "zod";
import { canonicalize } from "../foundation/canonical-json.js";
import { TOOL_CLASSES } from "../vocabulary/classes.js";
import { toolVocabulary, type ToolVocabulary } from "../vocabulary/vocabulary.js";
import { PathFactSchema, SENSITIVE_LABELS, pathFacts, type PathOptions } from "./path.js";
import { RecipientsFactSchema, recipientFacts } from "./recipients.js";
import { SecretFactSchema, secretFacts } from "./secrets.js";
import { findInShape, type FoundCommand } from "./shape.js";
import { UrlFactSchema, urlFacts } from "./url.js";

export { urlFacts, UrlFactSchema, MAX_URL_CHARS, type UrlFact, type HostRange } from "./url.js";
export { ipFacts, parseIpv4, parseIpv6, type IpFacts, type IpRange } from "./ip.js";
export {
  pathFacts,
  PathFactSchema,
  SENSITIVE_LABELS,
  MAX_PATH_CHARS,
  type PathFact,
  type PathOptions,
  type SensitiveLabel,
} from "./path.js";
export {
  recipientFacts,
  RecipientsFactSchema,
  RecipientFactSchema,
  MAX_RECIPIENTS,
  type RecipientsFact,
  type RecipientFact,
  type RecipientOptions,
} from "./recipients.js";
export { secretFacts, SecretFactSchema, MAX_DECODED_BYTES, type SecretFact } from "./secrets.js";
export {
  findInShape,
  MAX_SHAPE_DEPTH,
  MAX_SHAPE_NODES,
  type ShapeFindings,
  type FoundCommand,
} from "./shape.js";

/** The version of the fact set's JSON shape: a change that is not an addition bumps it. */
export const FACTS_VERSION = 1;

/** Shell facts for one command, from the shell parser (src/facts/shell/), injected. */
export type ShellFactsFunction<S> = (command: string, options: { cwd?: string }) => S;

export interface ActionFactsOptions<S = unknown> extends PathOptions {
  /** The registry revision's vocabulary; default the shipped one. */
  vocabulary?: ToolVocabulary;
  /** Internal mail domains: each matches itself and its subdomains. */
  internalDomains?: readonly string[];
  /** The shell parser; without it the `shell` slot is left out. */
  shellFacts?: ShellFactsFunction<S>;
}

/** The fact set's schema, with the shell parser's schema in the `shell` slot. */
export function actionFactsSchema<S extends z.ZodType>(shell: S) {
  const command = z
    .object({ text: z.string(), argv: z.array(z.string()).optional(), at: z.string() })
    .strict();
  const summary = z
    .object({
      hosts: z.array(z.string()).describe("Hosts of every URL that parsed"),
      internalUrl: z.boolean().describe("A URL reaches an internal or metadata host"),
      metadataUrl: z.boolean(),
      userinfoUrl: z.boolean().describe("A URL carries user info (a decoy host, a password)"),
      unparsedUrl: z.boolean(),
      sensitivePaths: z.array(z.enum(SENSITIVE_LABELS)),
      credentialPath: z.boolean(),
      persistencePath: z.boolean(),
      outsideProject: z.boolean().describe("A path resolves outside the project root"),
      secretKinds: z.array(z.string()).describe("Secret types, as sent or after decoding"),
    })
    .strict();
  const tool = z
    .object({
      name: z.string(),
      class: z.enum(TOOL_CLASSES),
      mcp: z.object({ server: z.string(), tool: z.string() }).strict().optional(),
      cwd: z.string().optional(),
      commands: z.array(command),
      shell: z.array(shell).optional(),
      urls: z.array(UrlFactSchema),
      paths: z.array(PathFactSchema),
      recipients: RecipientsFactSchema,
      secrets: SecretFactSchema,
      summary,
      unparsed: z
        .array(z.enum(["depth", "nodes", "too-many"]))
        .describe("Parameters a bound left unread: never read as harmless"),
    })
    .strict();
  return z
    .object({ version: z.literal(FACTS_VERSION), hook: z.string(), tools: z.array(tool) })
    .strict()
    .meta({ id: "ActionFacts", description: "What a call does, computed once (docs/facts.md)" });
}

/** The fact set's schema with the shell slot unchecked (the shell parser brings its own). */
export const ActionFactsSchema = actionFactsSchema(z.unknown());
export type ActionFacts<S = unknown> = Omit<z.infer<typeof ActionFactsSchema>, "tools"> & {
  tools: ToolCallFacts<S>[];
};
export type ToolCallFacts<S = unknown> = Omit<
  z.infer<typeof ActionFactsSchema>["tools"][number],
  "shell"
> & { shell?: S[] };

/** The facts of one call of `hook` with `event` (the catalog's event shape). */
export function computeActionFacts<S = unknown>(
  hook: string,
  event: Readonly<Record<string, unknown>>,
  options: ActionFactsOptions<S> = {},
): ActionFacts<S> {
  return {
    version: FACTS_VERSION,
    hook,
    tools: toolsOf(hook, event).map((t) => toolCallFacts(t, options)),
  };
}

interface ToolInput {
  name: string;
  params: unknown;
  /** false for a tool only offered (before_llm_call): it has no parameters to read. */
  called: boolean;
}

function toolsOf(hook: string, event: Readonly<Record<string, unknown>>): ToolInput[] {
  const name = typeof event.toolName === "string" ? event.toolName : undefined;
  if (name !== undefined) return [{ name, params: event.params, called: true }];
  if (hook === "after_llm_call" && Array.isArray(event.toolCalls))
    return event.toolCalls.map((call: unknown) => toolCallInput(call));
  if (hook === "before_llm_call" && Array.isArray(event.tools))
    return event.tools.map((tool: unknown) => ({
      name: nameOf(tool),
      params: undefined,
      called: false,
    }));
  return [];
}

/** `{ name, arguments }` or OpenAI's `{ function: { name, arguments } }`; JSON text parsed. */
function toolCallInput(call: unknown): ToolInput {
  const record = isRecord(call) ? call : {};
  const fn = isRecord(record.function) ? record.function : record;
  const raw = fn.arguments ?? fn.input ?? fn.params;
  return {
    name: nameOf(fn),
    params: typeof raw === "string" ? { arguments: raw } : raw,
    called: true,
  };
}

function nameOf(value: unknown): string {
  return isRecord(value) && typeof value.name === "string" ? value.name : "";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function toolCallFacts<S>(input: ToolInput, options: ActionFactsOptions<S>): ToolCallFacts<S> {
  const identity = (options.vocabulary ?? toolVocabulary).classify(input.name);
  const found = findInShape(input.params);
  const commands = commandsOf(found.commands, input.params, identity.class);
  const cwd = found.cwd ?? options.cwd;
  const pathOptions: PathOptions = { ...options };
  if (cwd !== undefined) pathOptions.cwd = cwd;
  const urls = found.urls.map(urlFacts);
  const paths = found.paths.map((p) => pathFacts(p, pathOptions));
  const recipients = recipientFacts(found.recipients, options);
  const secrets = secretFacts(input.called ? [paramsText(input.params)] : []);
  const facts: ToolCallFacts<S> = {
    name: identity.name,
    class: identity.class,
  } as ToolCallFacts<S>;
  if (identity.mcp !== undefined) facts.mcp = { ...identity.mcp };
  if (cwd !== undefined) facts.cwd = cwd;
  facts.commands = commands;
  if (options.shellFacts !== undefined) {
    const shellFacts = options.shellFacts;
    facts.shell = commands.map((c) => shellFacts(c.text, cwd === undefined ? {} : { cwd }));
  }
  Object.assign(facts, { urls, paths, recipients, secrets });
  facts.summary = summaryOf(facts);
  facts.unparsed = found.unparsed;
  return facts;
}

/**
 * The commands found; for a shell tool whose command sits under a key no table lists
 * (`{ input: "rm -rf /" }`, a bare string), its only top-level text is the command.
 */
function commandsOf(found: FoundCommand[], params: unknown, toolClass: string): FoundCommand[] {
  if (found.length > 0 || toolClass !== "shell") return found;
  if (typeof params === "string") return [{ text: params, at: "" }];
  if (!isRecord(params)) return found;
  const texts = Object.entries(params).filter(([, v]) => typeof v === "string");
  return texts.length === 1 ? [{ text: texts[0]![1] as string, at: texts[0]![0] }] : found;
}

function paramsText(params: unknown): string {
  if (params === undefined) return "";
  if (typeof params === "string") return params;
  try {
    return canonicalize(params);
  } catch {
    return "";
  }
}

function summaryOf(facts: ToolCallFacts<unknown>): ToolCallFacts["summary"] {
  const parsed = facts.urls.filter((u) => u.unparsed === undefined);
  const sensitive = new Set(facts.paths.flatMap((p) => p.sensitive));
  return {
    hosts: [...new Set(parsed.map((u) => u.host ?? ""))].filter((h) => h !== ""),
    internalUrl: parsed.some((u) => u.internal),
    metadataUrl: parsed.some((u) => u.metadata),
    userinfoUrl: parsed.some((u) => u.userinfo),
    unparsedUrl: parsed.length < facts.urls.length,
    sensitivePaths: SENSITIVE_LABELS.filter((label) => sensitive.has(label)),
    credentialPath: facts.paths.some((p) => p.credentials),
    persistencePath: facts.paths.some((p) => p.persistence),
    outsideProject: facts.paths.some((p) => p.insideProject === false),
    secretKinds: [...new Set([...facts.secrets.kinds, ...facts.secrets.decodedKinds])],
  };
}
