/**
 * Classify a tool by the name its framework gave it. Exact names first (in any case), then MCP
 * names by their bare tool name, then known prefixes of either, then the words of the
 * tool's name, its MCP title and its server's name (words.ts); a tool none of these knows is
 * `unknown`. An app's own tools are added with `extend`. Pure and synchronous: policies call it
 * per tool call.
 */
import { HookbusError } from "../foundation/errors.js";
import { isToolClass, type ToolClass } from "./classes.js";
import { parseMcpToolName, type McpToolName } from "./mcp.js";
import { KNOWN_TOOL_NAMES, KNOWN_TOOL_PREFIXES } from "./names.js";
import { classOfWords } from "./words.js";

export interface ToolIdentity {
  /** The name as the framework sent it. */
  name: string;
  class: ToolClass;
  /** For an MCP tool: its server and bare tool name. */
  mcp?: McpToolName;
}

export interface ClassifyOptions {
  /** The MCP server the tool came from, when the caller knows it (the hookbus MCP gateway does). */
  mcpServer?: string;
  /** The tool's MCP annotations, as its server's `tools/list` gave them. */
  annotations?: McpToolAnnotations;
}

/**
 * MCP tool annotations (MCP spec, `ToolAnnotations`). The server says them of itself, so they are
 * untrusted: they may make a class stricter, never more lenient (a `readOnlyHint` never turns an
 * unknown tool into a reader). Unknown keys are ignored.
 */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface VocabularyExtension {
  /** Exact tool names (matched case-insensitively too) and their classes. */
  names?: Readonly<Record<string, ToolClass>>;
  /** Name prefixes and their classes, tried after every exact name. */
  prefixes?: Readonly<Record<string, ToolClass>>;
}

export class ToolVocabulary {
  private readonly exact = new Map<string, ToolClass>();
  private readonly folded = new Map<string, ToolClass>();
  private readonly prefixes: (readonly [string, ToolClass])[];
  /** The prefixes in the same order, lower-cased once (classify runs per tool call). */
  private readonly foldedPrefixes: (readonly [string, ToolClass])[];

  constructor(
    names: Iterable<readonly [string, ToolClass]>,
    prefixes: Iterable<readonly [string, ToolClass]>,
  ) {
    for (const [name, toolClass] of names) {
      this.exact.set(name, toolClass);
      this.folded.set(name.toLowerCase(), toolClass);
    }
    // Longest prefix first, so `browser_` loses to a more specific one an app adds.
    this.prefixes = [...prefixes].sort((a, b) => b[0].length - a[0].length);
    this.foldedPrefixes = this.prefixes.map(([prefix, toolClass]) => [
      prefix.toLowerCase(),
      toolClass,
    ]);
  }

  /** A vocabulary with an app's own tool names and prefixes added (theirs win). */
  extend(extension: VocabularyExtension): ToolVocabulary {
    const names = [...this.exact, ...checkedEntries(extension.names, "names")];
    const prefixes = [...this.prefixes, ...checkedEntries(extension.prefixes, "prefixes")];
    return new ToolVocabulary(names, prefixes);
  }

  classify(name: string, options: ClassifyOptions = {}): ToolIdentity {
    const parsed = parseMcpToolName(name);
    const mcp =
      parsed ??
      (options.mcpServer === undefined ? undefined : { server: options.mcpServer, tool: name });
    // Exact names (the full one, then an MCP tool's bare one) before any prefix: a registry
    // prefix for a whole server (`mcp__github__`) must not turn its `send_email` into `other`.
    const named =
      this.exactClassOf(name) ??
      (parsed && this.exactClassOf(parsed.tool)) ??
      this.prefixClassOf(name) ??
      (parsed && this.prefixClassOf(parsed.tool)) ??
      classOfWords(mcp?.tool ?? name, options.annotations?.title ?? "", mcp?.server ?? "") ??
      "unknown";
    const toolClass = stricterByAnnotations(named, options.annotations);
    return mcp === undefined ? { name, class: toolClass } : { name, class: toolClass, mcp };
  }

  private exactClassOf(name: string): ToolClass | undefined {
    return this.exact.get(name) ?? this.folded.get(name.toLowerCase());
  }

  private prefixClassOf(name: string): ToolClass | undefined {
    const lower = name.toLowerCase();
    for (const [prefix, toolClass] of this.foldedPrefixes) {
      if (lower.startsWith(prefix)) return toolClass;
    }
    return undefined;
  }
}

/**
 * A reader its own server says may change things (`readOnlyHint: false`) is a writer: the
 * annotations only ever make a class stricter.
 */
function stricterByAnnotations(
  toolClass: ToolClass,
  annotations: McpToolAnnotations | undefined,
): ToolClass {
  if (toolClass === "file-read" && annotations?.readOnlyHint === false) return "file-write";
  return toolClass;
}

function checkedEntries(
  table: Readonly<Record<string, ToolClass>> | undefined,
  field: string,
): [string, ToolClass][] {
  const entries = Object.entries(table ?? {});
  for (const [name, toolClass] of entries) {
    if (name === "" || !isToolClass(toolClass)) {
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `tool vocabulary ${field}: "${name}" needs a non-empty name and one of the tool classes, got ${JSON.stringify(toolClass)}`,
        { field, name },
      );
    }
  }
  return entries;
}

/** The shipped vocabulary: OpenClaw, Claude Code, the AI SDK and OpenAI Agents, MCP reference servers. */
export const toolVocabulary = new ToolVocabulary(KNOWN_TOOL_NAMES, KNOWN_TOOL_PREFIXES);

/** The class of a tool name under the shipped vocabulary. */
export function toolClassOf(name: string, options?: ClassifyOptions): ToolClass {
  return toolVocabulary.classify(name, options).class;
}
