/**
 * Helpers shared by the example policies: tool-name patterns, configuration errors, and reading
 * the text out of a tool result whatever shape the agent gave it.
 */
import { HookbusError, isToolClass, toolClassOf } from "../../src/index.js";

/** A configuration mistake in a policy factory: thrown at start-up, never at call time. */
export function configError(policy: string, message: string): HookbusError {
  return new HookbusError("HOOKBUS_INVALID_POLICY", `policy "${policy}": ${message}`, { policy });
}

/**
 * A tool-name pattern: an exact name, a glob where `*` matches any run of characters
 * (`mcp__github__*`, `*_delete`), or a tool class of the shared vocabulary (`class:shell`,
 * `class:send-message`; docs/vocabulary.md), which matches the tool under every framework's name
 * (`exec`, `Bash`, `run_command`; `send_email`, `mcp__mail__send_email`). Nothing else is special,
 * so names with dots or brackets need no escaping. Names match case-sensitively, like tool names
 * in every LLM API.
 */
export type ToolPattern = string;

export interface ToolMatcher {
  /** The first pattern that matches `name`, or undefined. */
  match(name: string): ToolPattern | undefined;
  readonly patterns: readonly ToolPattern[];
}

const CLASS_PREFIX = "class:";

export function toolMatcher(
  policy: string,
  field: string,
  patterns: readonly ToolPattern[] | undefined,
): ToolMatcher {
  const list = [...(patterns ?? [])];
  const compiled = list.map((pattern, i) => {
    if (typeof pattern !== "string" || pattern === "") {
      throw configError(policy, `${field}[${i}] must be a non-empty tool name or glob`);
    }
    if (pattern.startsWith(CLASS_PREFIX)) {
      const toolClass = pattern.slice(CLASS_PREFIX.length);
      if (!isToolClass(toolClass))
        throw configError(policy, `${field}[${i}]: "${toolClass}" is not a tool class`);
      return (name: string) => toolClassOf(name) === toolClass;
    }
    if (!pattern.includes("*")) return (name: string) => name === pattern;
    const source = pattern
      .split("*")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    const regex = new RegExp(`^${source}$`, "s");
    return (name: string) => regex.test(name);
  });
  return {
    patterns: Object.freeze(list),
    match(name) {
      const i = compiled.findIndex((test) => test(name));
      return i === -1 ? undefined : list[i];
    },
  };
}

/** A regex from a RegExp or a string source (strings are compiled without flags). */
export function toRegExp(policy: string, field: string, value: unknown): RegExp {
  if (value instanceof RegExp) {
    // A global or sticky regex keeps `lastIndex` between `test` calls and would answer
    // differently on every other call: strip those flags.
    return value.global || value.sticky
      ? new RegExp(value.source, value.flags.replace(/[gy]/g, ""))
      : value;
  }
  if (typeof value === "string" && value !== "") {
    try {
      return new RegExp(value);
    } catch (error) {
      throw configError(policy, `${field} is not a valid regular expression: ${String(error)}`);
    }
  }
  throw configError(policy, `${field} must be a RegExp or a non-empty regex source string`);
}

export function checkPolicyName(name: unknown, fallback: string): string {
  const chosen = name ?? fallback;
  if (typeof chosen !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(chosen)) {
    throw new HookbusError(
      "HOOKBUS_INVALID_POLICY",
      `invalid policy name ${JSON.stringify(chosen)}: use 1-64 characters of A-Z a-z 0-9 _ -`,
      { policy: typeof chosen === "string" ? chosen : JSON.stringify(chosen) },
    );
  }
  return chosen;
}

/** `{ type: "text", text }`: the content part every LLM API uses for text. */
export interface TextPart {
  type: "text";
  text: string;
  [key: string]: unknown;
}

export function isTextPart(value: unknown): value is TextPart {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { type?: unknown }).type === "text" &&
    typeof (value as { text?: unknown }).text === "string"
  );
}

export type ContentParts = { type: string; [key: string]: unknown }[];

export function isContentParts(value: unknown): value is ContentParts {
  return (
    Array.isArray(value) &&
    value.every(
      (part) =>
        typeof part === "object" &&
        part !== null &&
        typeof (part as { type?: unknown }).type === "string",
    )
  );
}

/**
 * The shapes a tool result takes, as far as its text is concerned:
 * - `text`: a string;
 * - `parts`: content parts (`[{type: "text", text}, {type: "image", ...}]`), directly or as the
 *   `content` of an MCP-style result object (`{content: [...], isError}`);
 * - `value`: anything else (an object, a number): its text is in its string leaves.
 */
export type ResultShape =
  | { kind: "none" }
  | { kind: "text"; text: string }
  | { kind: "parts"; parts: ContentParts }
  | { kind: "value"; value: unknown };

export function resultShape(result: unknown): ResultShape {
  if (result === undefined || result === null) return { kind: "none" };
  if (typeof result === "string") return { kind: "text", text: result };
  if (isContentParts(result)) return { kind: "parts", parts: result };
  if (typeof result === "object" && !Array.isArray(result)) {
    const content = (result as { content?: unknown }).content;
    if (typeof content === "string") return { kind: "text", text: content };
    if (isContentParts(content)) return { kind: "parts", parts: content };
  }
  return { kind: "value", value: result };
}

/** Every string in a JSON-like value (object values and array items, recursively; not keys). */
export function stringLeaves(value: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 64) return out;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringLeaves(item, out, depth + 1);
  else if (typeof value === "object" && value !== null)
    for (const item of Object.values(value)) stringLeaves(item, out, depth + 1);
  return out;
}

/** Rebuild a JSON-like value with every string leaf passed through `fn`. */
export function mapStringLeaves(value: unknown, fn: (text: string) => string, depth = 0): unknown {
  if (depth > 64) return value;
  if (typeof value === "string") return fn(value);
  if (Array.isArray(value)) return value.map((item) => mapStringLeaves(item, fn, depth + 1));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, mapStringLeaves(item, fn, depth + 1)]),
    );
  }
  return value;
}

/** All the text of a tool result, for screening (text parts and string leaves joined). */
export function resultText(result: unknown): string {
  const shape = resultShape(result);
  switch (shape.kind) {
    case "none":
      return "";
    case "text":
      return shape.text;
    case "parts":
      return shape.parts
        .filter(isTextPart)
        .map((p) => p.text)
        .join("\n");
    case "value":
      return stringLeaves(shape.value).join("\n");
  }
}

/** Shorten a quoted snippet for a reason or a log line. */
export function snippet(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
