/**
 * Walks a bash tree and collects every simple command that would run: in lists, pipelines, loops,
 * conditions, subshells, function bodies, `$(…)`, `<(…)` and here-documents. Each keeps its words
 * (quoting removed), the constructs it sits in (`via`), its pipeline stage and its redirections.
 * Function bodies count as running: a definition is usually followed by a call, and a fact that
 * over-reports a deletion is safer than one that misses it.
 */
import type { PlainTree, ShellNode } from "./tree.js";
import type { RedirectFact } from "./schema.js";
import { ShellLimitError, type ShellLimits } from "./limits.js";
import { argumentWords, wordValue, type WordEnv, type WordValue } from "./words.js";

export interface RawRedirect {
  mode: RedirectFact["mode"];
  target: WordValue;
}

export interface RawCommand {
  words: WordValue[];
  via: string[];
  pipeline?: { id: number; stage: number };
  redirects: RawRedirect[];
  /** What its standard input is given in the command text: a here-document or here-string. */
  stdin?: { from: "heredoc" | "herestring"; text: string };
}

interface WalkContext {
  via: string[];
  pipeline?: { id: number; stage: number };
  depth: number;
}

/** Node types that hold no command anywhere below them: the walk does not enter them. */
const LEAVES = new Set([
  "word",
  "raw_string",
  "ansi_c_string",
  "variable_name",
  "string_content",
  "comment",
  "file_descriptor",
  "heredoc_start",
  "heredoc_end",
  "heredoc_content",
  "special_variable_name",
  "regex",
  "test_operator",
]);

export class CommandCollector {
  readonly commands: RawCommand[] = [];
  private readonly vars: Map<string, string>;
  private pipelines = 0;
  private readonly env: WordEnv;
  /** The `command` nodes collected so far, by id. */
  private readonly seen = new Set<number>();

  constructor(
    private readonly limits: ShellLimits,
    private readonly home: string | undefined,
    vars: ReadonlyMap<string, string>,
    substitute: (node: ShellNode, env: WordEnv) => string | undefined,
  ) {
    this.vars = new Map(vars);
    // Each `$(…)` is evaluated once: words are valued again at every level of a nested `$(…)`,
    // and without this a deeply nested command would cost the square of its depth.
    const outputs = new Map<number, string | undefined>();
    this.env = {
      vars: this.vars,
      substitute: (node) => {
        if (outputs.has(node.id)) return outputs.get(node.id);
        const output = substitute(node, this.env);
        outputs.set(node.id, output);
        return output;
      },
    };
  }

  /**
   * Collects every command of a tree. Then sweeps: a `command` node the walk did not reach (a
   * construct it does not model, such as a future grammar's) is collected too, marked
   * `unmodelled`, so no command can hide in an unexpected place of the tree.
   */
  collect(tree: PlainTree, via: string[]): RawCommand[] {
    this.walk(tree.root, { via, depth: 0 });
    for (const node of tree.commands) {
      if (!this.seen.has(node.id))
        this.command(node, { via: [...via, "unmodelled"], depth: 0 }, []);
    }
    return this.commands;
  }

  walk(node: ShellNode, ctx: WalkContext): void {
    if (ctx.depth > this.limits.maxTreeDepth) {
      throw new ShellLimitError("too-deep", `tree depth over ${this.limits.maxTreeDepth}`);
    }
    const type = node.type;
    if (LEAVES.has(type)) return;
    const inner = { ...ctx, depth: ctx.depth + 1 };
    switch (type) {
      case "command":
        return this.command(node, ctx, []);
      case "redirected_statement":
        return this.redirected(node, ctx);
      case "pipeline":
        return this.pipeline(node.namedChildren, ctx, undefined);
      case "variable_assignment":
        return this.assignment(node, inner);
      case "function_definition":
        return this.children(node, { ...inner, via: [...ctx.via, `function ${name(node)}`] });
      case "subshell":
        return this.children(node, { ...inner, via: [...ctx.via, "(…)"] });
      case "command_substitution":
        return this.nested(node, inner, "$(…)");
      case "process_substitution":
        return this.nested(node, inner, "<(…)");
      default:
        return this.children(node, inner);
    }
  }

  private children(node: ShellNode, ctx: WalkContext): void {
    for (const child of node.namedChildren) if (child !== null) this.walk(child, ctx);
  }

  /** A substitution's commands run in their own process: not a stage of the outer pipeline. */
  private nested(node: ShellNode, ctx: WalkContext, via: string): void {
    this.children(node, { via: [...ctx.via, via], depth: ctx.depth });
  }

  /** An assignment's commands: in its value, and in a subscript's index (`a[$(cmd)]=1`). */
  private assignmentParts(node: ShellNode, ctx: WalkContext): void {
    const nameNode = node.childForFieldName("name");
    const valueNode = node.childForFieldName("value");
    if (nameNode !== null && nameNode.type !== "variable_name") this.walk(nameNode, ctx);
    if (valueNode !== null) this.walk(valueNode, ctx);
  }

  private assignment(node: ShellNode, ctx: WalkContext): void {
    const nameNode = node.childForFieldName("name");
    const valueNode = node.childForFieldName("value");
    this.assignmentParts(node, ctx);
    if (nameNode?.type !== "variable_name") return;
    const value = valueNode === null ? { text: "", static: true } : wordValue(valueNode, this.env);
    if (value.static) this.vars.set(nameNode.text, value.text);
    else this.vars.delete(nameNode.text);
  }

  private pipeline(
    stages: (ShellNode | null)[],
    ctx: WalkContext,
    first: number | undefined,
  ): void {
    const id = first ?? ++this.pipelines;
    let stage = first === undefined ? 0 : 1;
    const after: ShellNode[] = [];
    for (const node of untangle(stages, after)) {
      this.walk(node, { ...ctx, depth: ctx.depth + 1, pipeline: { id, stage } });
      stage += 1;
    }
    for (const node of after) this.walk(node, { ...ctx, depth: ctx.depth + 1 });
  }

  private redirected(node: ShellNode, ctx: WalkContext): void {
    const body = node.childForFieldName("body");
    // Nodes are fresh objects on every access: select the redirections by field, not identity.
    const redirects = node.childrenForFieldName("redirect");
    const continuation = redirects.flatMap((r) => heredocContinuation(r));
    const piped = continuation.some((c) => c.type === "pipeline");
    const pipeline = piped ? (ctx.pipeline ?? { id: ++this.pipelines, stage: 0 }) : undefined;
    const bodyCtx = { ...ctx, depth: ctx.depth + 1, pipeline: pipeline ?? ctx.pipeline };
    if (body?.type === "command") this.command(body, bodyCtx, redirects);
    else {
      if (body !== null) this.walk(body, bodyCtx);
      this.commandlessRedirects(redirects, bodyCtx);
    }
    // `cat <<EOF | sh`: the grammar hangs `| sh` under the here-document; it is the next stage.
    for (const next of continuation) {
      if (next.type === "pipeline") this.pipeline(next.namedChildren, bodyCtx, pipeline?.id);
      else this.walk(next, { ...ctx, depth: ctx.depth + 1 });
    }
  }

  /** `{ …; } > f`, `while …; done < f`: the redirections apply to no single command. */
  private commandlessRedirects(redirects: ShellNode[], ctx: WalkContext): void {
    const raw = redirects.flatMap((r) => this.redirect(r, ctx).redirects);
    if (raw.length > 0) this.push({ words: [], via: ctx.via, redirects: raw });
  }

  private command(node: ShellNode, ctx: WalkContext, outer: ShellNode[]): void {
    this.seen.add(node.id);
    const words: WordValue[] = [];
    const redirectNodes = [...outer];
    let named = false;
    for (const child of node.namedChildren) {
      if (child === null) continue;
      const type = child.type;
      if (!named && type === "variable_assignment") {
        this.assignmentParts(child, { ...ctx, pipeline: undefined, depth: ctx.depth + 1 });
        continue;
      }
      if (type.endsWith("_redirect")) {
        redirectNodes.push(child);
        continue;
      }
      named = true;
      words.push(...argumentWords(child, this.env, this.home, type));
      if (!LEAVES.has(type)) this.walk(child, { via: ctx.via, depth: ctx.depth + 1 });
    }
    const command: RawCommand = { words, via: ctx.via, redirects: [] };
    if (ctx.pipeline !== undefined) command.pipeline = ctx.pipeline;
    for (const r of redirectNodes) {
      const found = this.redirect(r, ctx);
      command.redirects.push(...found.redirects);
      if (found.stdin !== undefined) command.stdin = found.stdin;
    }
    this.push(command);
  }

  private push(command: RawCommand): void {
    if (this.commands.length >= this.limits.maxCommands) {
      throw new ShellLimitError("too-many-commands", `more than ${this.limits.maxCommands}`);
    }
    this.commands.push(command);
  }

  private redirect(
    node: ShellNode,
    ctx: WalkContext,
  ): { redirects: RawRedirect[]; stdin?: RawCommand["stdin"] } {
    const inner = { via: ctx.via, depth: ctx.depth + 1 };
    if (node.type === "herestring_redirect") {
      const word = node.namedChildren.at(-1);
      if (word === null || word === undefined) return { redirects: [] };
      this.walk(word, inner);
      const value = wordValue(word, this.env);
      return { redirects: [], stdin: { from: "herestring", text: value.text } };
    }
    if (node.type === "heredoc_redirect") {
      const nested = node.namedChildren.filter((c): c is ShellNode => c?.type === "file_redirect");
      const body = node.namedChildren.find((c) => c?.type === "heredoc_body");
      if (body !== null && body !== undefined) this.walk(body, inner);
      const redirects = nested.flatMap((r) => this.fileRedirect(r, inner));
      return { redirects, stdin: { from: "heredoc", text: body?.text ?? "" } };
    }
    return { redirects: this.fileRedirect(node, inner) };
  }

  private fileRedirect(node: ShellNode, ctx: WalkContext): RawRedirect[] {
    const destination = node.childForFieldName("destination") ?? node.namedChildren.at(-1);
    if (destination === null || destination === undefined) return [];
    this.walk(destination, ctx);
    const operator = node.children.find((c) => c !== null && !c.isNamed)?.type ?? ">";
    const target = wordValue(destination, this.env);
    return [{ mode: redirectMode(operator, target.text), target }];
  }
}

function redirectMode(operator: string, target: string): RedirectFact["mode"] {
  if ((operator === ">&" || operator === "<&") && /^(?:\d+|-)$/u.test(target)) return "dup";
  if (operator.startsWith("<")) return "read";
  if (operator.endsWith(">>")) return "append";
  return "write";
}

const HEREDOC_PARTS = new Set(["heredoc_start", "heredoc_body", "heredoc_end", "file_redirect"]);

function heredocContinuation(node: ShellNode): ShellNode[] {
  if (node.type !== "heredoc_redirect") return [];
  return node.namedChildren.filter((c): c is ShellNode => c !== null && !HEREDOC_PARTS.has(c.type));
}

/**
 * A pipeline's real stages. tree-sitter-bash parses `a | b | c && d` as `a | (b | c && d)`: a
 * pipeline of three or more stages followed by `&&` or `||` ends in a list. Bash runs
 * `(a | b | c) && d`, and `curl … | cat | sh && true` must still say that `sh` reads `curl`'s
 * output: the list's leftmost part continues the pipeline, and the rest of the list (`d`) is put
 * in `after`, in order, to run outside it. Longer chains nest the same shape again.
 */
function untangle(stages: readonly (ShellNode | null)[], after: ShellNode[]): ShellNode[] {
  const out: ShellNode[] = [];
  for (const [index, node] of stages.entries()) {
    if (node === null) continue;
    if (index === 0 || node.type !== "list") {
      out.push(node);
      continue;
    }
    const rests: ShellNode[][] = [];
    let head = node;
    while (head.type === "list" && head.namedChildren[0] !== undefined) {
      rests.push(head.namedChildren.slice(1));
      head = head.namedChildren[0];
    }
    // The head's own later stages can be lists again (`a | b | c | d && e && f`).
    out.push(...(head.type === "pipeline" ? untangle(head.namedChildren, after) : [head]));
    for (const rest of rests.reverse()) after.push(...rest);
  }
  return out;
}

function name(node: ShellNode): string {
  return node.childForFieldName("name")?.text ?? "?";
}
