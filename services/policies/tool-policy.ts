/**
 * Tool allowlist / denylist with argument rules.
 *
 * - before_llm_call: narrows `tools` to the permitted ones (the merge filters the agent's original
 *   list by these names, so nothing can be added).
 * - after_llm_call: allowlists the ids of the permitted tool calls when some are not permitted
 *   (the agent SDK then blocks the others at before_tool_call without a round trip).
 * - before_tool_call: the hard gate: blocks a tool that is not permitted and a call whose
 *   arguments break an argument rule, with a reason that says which rule.
 *
 * A tool is permitted when it matches `allow` (or `allow` is not given) and does not match
 * `deny`. Deny always wins over allow.
 */
import {
  definePolicy,
  toolCallId,
  toolCallName,
  toolDefinitionName,
  type Policy,
  type ToolCall,
} from "../../src/index.js";
import {
  checkPolicyName,
  configError,
  snippet,
  toolMatcher,
  toRegExp,
  type ToolMatcher,
  type ToolPattern,
} from "./shared.js";

/** Deny a call when an argument matches (`denyIfMatches`) or does not match (`denyUnlessMatches`). */
export interface ArgRule {
  /** Tool name or glob (`*`) the rule applies to. */
  tool: ToolPattern;
  /**
   * Dotted path into the call's params (`command`, `options.cwd`, `argv`). Without it the rule
   * looks at every string in the params (for `denyIfMatches` only).
   */
  arg?: string;
  /** Deny when the argument matches. */
  denyIfMatches?: RegExp | string;
  /** Deny when the argument is missing or does not match (e.g. a URL outside allowed hosts). */
  denyUnlessMatches?: RegExp | string;
  /** The block reason; default names the tool, argument and pattern. */
  reason?: string;
}

export interface ToolPolicyOptions {
  /** Registry name; default `tool-policy`. */
  name?: string;
  /** When given, only tools matching one of these names/globs are permitted. `[]` permits none. */
  allow?: ToolPattern[];
  /** Tools never permitted (wins over `allow`). */
  deny?: ToolPattern[];
  argRules?: ArgRule[];
  version?: string;
}

interface CompiledRule {
  tool: ToolMatcher;
  toolPattern: string;
  path: string[] | undefined;
  pattern: RegExp;
  kind: "deny-if-matches" | "deny-unless-matches";
  reason: string | undefined;
}

export interface ToolJudgement {
  permitted: boolean;
  /** Why not, when not permitted. */
  reason?: string;
}

/** The pure decision logic, exported for tests and for reuse outside a policy. */
export class ToolRules {
  private readonly allow: ToolMatcher | undefined;
  private readonly deny: ToolMatcher;
  private readonly rules: CompiledRule[];

  constructor(
    readonly policy: string,
    options: Pick<ToolPolicyOptions, "allow" | "deny" | "argRules">,
  ) {
    if (options.allow !== undefined && !Array.isArray(options.allow))
      throw configError(policy, "allow must be an array of tool names or globs");
    if (options.deny !== undefined && !Array.isArray(options.deny))
      throw configError(policy, "deny must be an array of tool names or globs");
    if (options.argRules !== undefined && !Array.isArray(options.argRules))
      throw configError(policy, "argRules must be an array");
    this.allow =
      options.allow === undefined ? undefined : toolMatcher(policy, "allow", options.allow);
    this.deny = toolMatcher(policy, "deny", options.deny);
    this.rules = (options.argRules ?? []).map((rule, i) => this.compile(rule, i));
  }

  private compile(rule: ArgRule, i: number): CompiledRule {
    const at = `argRules[${i}]`;
    if (typeof rule !== "object" || rule === null)
      throw configError(this.policy, `${at} must be an object`);
    const hasIf = rule.denyIfMatches !== undefined;
    const hasUnless = rule.denyUnlessMatches !== undefined;
    if (hasIf === hasUnless) {
      throw configError(
        this.policy,
        `${at} needs exactly one of denyIfMatches and denyUnlessMatches`,
      );
    }
    if (rule.arg !== undefined && (typeof rule.arg !== "string" || rule.arg === "")) {
      throw configError(this.policy, `${at}.arg must be a non-empty dotted path`);
    }
    if (hasUnless && rule.arg === undefined) {
      throw configError(this.policy, `${at}: denyUnlessMatches needs an arg to check`);
    }
    return {
      tool: toolMatcher(this.policy, `${at}.tool`, [rule.tool]),
      toolPattern: rule.tool,
      path: rule.arg?.split("."),
      pattern: hasIf
        ? toRegExp(this.policy, `${at}.denyIfMatches`, rule.denyIfMatches)
        : toRegExp(this.policy, `${at}.denyUnlessMatches`, rule.denyUnlessMatches),
      kind: hasIf ? "deny-if-matches" : "deny-unless-matches",
      reason: rule.reason,
    };
  }

  /** Whether the tool itself (by name) is permitted. */
  judgeName(name: string): ToolJudgement {
    const denied = this.deny.match(name);
    if (denied !== undefined) {
      return {
        permitted: false,
        reason:
          denied === name
            ? `tool "${name}" is denied by policy "${this.policy}"`
            : `tool "${name}" is denied by policy "${this.policy}" (matches "${denied}")`,
      };
    }
    if (this.allow !== undefined && this.allow.match(name) === undefined) {
      return {
        permitted: false,
        reason: `tool "${name}" is not on the allowlist of policy "${this.policy}"`,
      };
    }
    return { permitted: true };
  }

  /** Whether one call (name and parsed params) is permitted. */
  judgeCall(name: string, params: Record<string, unknown>): ToolJudgement {
    const byName = this.judgeName(name);
    if (!byName.permitted) return byName;
    for (const rule of this.rules) {
      if (rule.tool.match(name) === undefined) continue;
      const broken = breaks(rule, params);
      if (broken === undefined) continue;
      return {
        permitted: false,
        reason: rule.reason ?? defaultReason(this.policy, name, rule, broken),
      };
    }
    return { permitted: true };
  }

  /** Whether any argument rule applies to this tool (so its arguments matter). */
  hasArgRules(name: string): boolean {
    return this.rules.some((rule) => rule.tool.match(name) !== undefined);
  }
}

/** The offending value (as text) when the call breaks the rule, else undefined. */
function breaks(rule: CompiledRule, params: Record<string, unknown>): string | undefined {
  if (rule.path === undefined) {
    // Any string anywhere in the params.
    for (const value of leafTexts(params)) if (rule.pattern.test(value)) return value;
    return undefined;
  }
  const value = at(params, rule.path);
  if (rule.kind === "deny-unless-matches") {
    if (value === undefined) return "(missing)";
    const text = asText(value);
    return rule.pattern.test(text) ? undefined : text;
  }
  if (value === undefined) return undefined;
  const text = asText(value);
  return rule.pattern.test(text) ? text : undefined;
}

function defaultReason(policy: string, tool: string, rule: CompiledRule, value: string): string {
  const arg = rule.path === undefined ? "an argument" : `argument "${rule.path.join(".")}"`;
  const what =
    rule.kind === "deny-if-matches"
      ? `matches the deny pattern ${String(rule.pattern)}`
      : value === "(missing)"
        ? `is missing (it must match ${String(rule.pattern)})`
        : `does not match the required pattern ${String(rule.pattern)}`;
  const shown = value === "(missing)" ? "" : ` (${JSON.stringify(snippet(value, 80))})`;
  return `tool "${tool}": ${arg}${shown} ${what} — denied by policy "${policy}"`;
}

function at(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = Array.isArray(current)
      ? /^\d+$/.test(key)
        ? current[Number(key)]
        : undefined
      : (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Strings as they are; arrays of scalars joined by spaces (argv); anything else as JSON. */
function asText(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null))
    return value.map(String).join(" ");
  if (typeof value === "object" && value !== null) return JSON.stringify(value);
  return String(value);
}

function leafTexts(value: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 64) return out;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== "object" || v === null) && value.length > 0)
      out.push(value.map(String).join(" "));
    for (const item of value) leafTexts(item, out, depth + 1);
  } else if (typeof value === "object" && value !== null)
    for (const item of Object.values(value)) leafTexts(item, out, depth + 1);
  return out;
}

/**
 * A model's tool call arguments as an object: OpenAI sends a JSON string, Anthropic an object
 * (`input`). Undefined when they cannot be read (then before_tool_call, which sees the parsed
 * params the tool will really get, decides).
 */
export function callArguments(call: ToolCall): Record<string, unknown> | undefined {
  const raw: unknown =
    "function" in call && typeof call.function === "object" && call.function !== null
      ? (call.function as { arguments?: unknown }).arguments
      : ((call as { arguments?: unknown }).arguments ?? (call as { input?: unknown }).input);
  if (raw === undefined) return {};
  let value: unknown = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return {};
    try {
      value = JSON.parse(raw) as unknown;
    } catch {
      return undefined;
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function toolPolicy(options: ToolPolicyOptions = {}): Policy {
  const name = checkPolicyName(options.name, "tool-policy");
  const rules = new ToolRules(name, options);
  return definePolicy({
    name,
    version: options.version ?? "1.0.0",
    hooks: {
      before_llm_call(event) {
        if (event.tools === undefined) return undefined;
        const permitted = event.tools.filter(
          (tool) => rules.judgeName(toolDefinitionName(tool)).permitted,
        );
        return permitted.length === event.tools.length ? undefined : { tools: permitted };
      },

      after_llm_call(event, _ctx, { logger }) {
        const allowed: { id: string }[] = [];
        let narrowed = false;
        for (const call of event.toolCalls) {
          const name = toolCallName(call);
          const args = callArguments(call);
          // Unreadable arguments are judged by name here; before_tool_call sees the real params.
          const judgement =
            args === undefined ? rules.judgeName(name) : rules.judgeCall(name, args);
          const id = toolCallId(call);
          if (judgement.permitted) {
            if (id !== undefined) allowed.push({ id });
          } else {
            narrowed = true;
            logger.info(
              { tool: name, toolCallId: id, reason: judgement.reason },
              "tool call not allowed",
            );
          }
        }
        // All permitted: no allowlist at all (an allowlist would also block calls without ids).
        return narrowed ? { toolCalls: allowed } : undefined;
      },

      before_tool_call(event) {
        const judgement = rules.judgeCall(event.toolName, event.params);
        return judgement.permitted ? undefined : { block: true, blockReason: judgement.reason };
      },
    },
  });
}

/**
 * The demo's instance: no destructive or remote-code shell commands, no raw disk tools, web
 * fetches over https only. Rules name tool classes, so they hold for OpenClaw's `exec`, Claude
 * Code's `Bash` and `WebFetch`, an MCP server's `run_command` or `fetch` alike; the shell rule
 * reads every string of the call (`command`, `cmd`, `commands`, `code`).
 */
export const defaultToolPolicy: Policy = toolPolicy({
  deny: ["format_disk", "*_admin"],
  argRules: [
    {
      tool: "class:shell",
      denyIfMatches:
        /\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(\/|~|\*)|\b(curl|wget)\b[^|;&]*\|\s*(ba|z)?sh\b|\bmkfs(\.\w+)?\b|\bdd\s+if=|:\(\)\s*\{\s*:\|:&\s*\};:/,
      reason: "destructive or remote-code shell commands are not allowed",
    },
    { tool: "class:web-fetch", arg: "url", denyUnlessMatches: /^https:\/\//i },
  ],
});
