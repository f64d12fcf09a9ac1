/** The tool vocabulary: tool classes mapped from every adapter's tool names (docs/vocabulary.md). */
export { TOOL_CLASSES, isToolClass, type ToolClass } from "./classes.js";
export { parseMcpToolName, mcpToolName, type McpToolName } from "./mcp.js";
export {
  ToolVocabulary,
  toolVocabulary,
  toolClassOf,
  type ToolIdentity,
  type ClassifyOptions,
  type VocabularyExtension,
  type McpToolAnnotations,
} from "./vocabulary.js";
export { toolFacts, type ToolFacts, type UrlFacts } from "./facts.js";
export { KNOWN_TOOL_NAMES, KNOWN_TOOL_PREFIXES } from "./names.js";
