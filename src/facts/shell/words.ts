/**
 * The value a word of the tree has once the shell has removed quoting: `r''m`, `\rm`, `"rm"` and
 * `$'\x72m'` are all `rm`. A part whose value depends on the run (`$1`, `$(date)`, `${x:-y}`)
 * makes the word not static; its text is kept as written, so a fact never invents a value.
 */
import type { ShellNode } from "./tree.js";

export interface WordValue {
  text: string;
  static: boolean;
  /** For `<(…)`: the fixed text the substitution prints, when it is fixed (`<(echo ls)`). */
  output?: string;
}

/** What a word can be resolved against: known variables, and the static output of `$(…)`. */
export interface WordEnv {
  vars: ReadonlyMap<string, string>;
  /** The static output of a command substitution (`$(echo rm)`), or undefined when unknown. */
  substitute(node: ShellNode): string | undefined;
}

const ANSI_SIMPLE: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** `$'…'`: bash's ANSI-C quoting, so `$'\x72\x6d'` is `rm`. */
export function decodeAnsiC(body: string): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gsu,
    (_m, esc: string) => {
      const head = esc[0] ?? "";
      if (head === "x" || head === "u" || head === "U") {
        const code = Number.parseInt(esc.slice(1), 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : "";
      }
      if (/[0-7]/u.test(head)) return String.fromCharCode(Number.parseInt(esc, 8) & 0xff);
      if (head === "c") return String.fromCharCode((esc.charCodeAt(1) & 0x1f) >>> 0);
      return ANSI_SIMPLE[esc] ?? `\\${esc}`;
    },
  );
}

/** Outside quotes a backslash quotes the next character; backslash-newline disappears. */
function unescapeBare(text: string): string {
  return text.replace(/\\(\n|.)/gsu, (_m, c: string) => (c === "\n" ? "" : c));
}

/** Inside double quotes a backslash only quotes `$`, backquote, `"`, `\` and newline. */
function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/gu, (_m, c: string) => (c === "\n" ? "" : c));
}

const SPECIAL_PARAMS = /^(?:[0-9@*#?$!-]|[0-9]+)$/u;

function expansionValue(node: ShellNode, env: WordEnv): WordValue {
  const text = node.text;
  // `$x` and `${x}` only: any operator (`${x:-y}`, `${#x}`, `${x/a/b}`) is left dynamic.
  const name = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/u.exec(text)?.[1];
  if (name === undefined || SPECIAL_PARAMS.test(name)) return { text, static: false };
  const value = env.vars.get(name);
  return value === undefined ? { text, static: false } : { text: value, static: true };
}

function partsValue(node: ShellNode, env: WordEnv, quoted: boolean): WordValue {
  const source = node.text;
  const base = node.startIndex;
  let text = "";
  let isStatic = true;
  let at = quoted ? 1 : 0;
  const end = quoted ? source.length - 1 : source.length;
  for (const child of node.namedChildren) {
    if (child === null) continue;
    const from = child.startIndex - base;
    if (from > at) text += literal(source.slice(at, from), quoted);
    const value = wordValue(child, env, quoted);
    text += value.text;
    isStatic &&= value.static;
    at = child.endIndex - base;
  }
  if (end > at) text += literal(source.slice(at, end), quoted);
  return { text, static: isStatic };
}

function literal(raw: string, quoted: boolean): string {
  return quoted ? unescapeDouble(raw) : unescapeBare(raw);
}

/** The value of one word node of tree-sitter-bash (an argument, a command name, a target). */
export function wordValue(
  node: ShellNode,
  env: WordEnv,
  quoted = false,
  type: string = node.type,
): WordValue {
  switch (type) {
    case "number":
      // `10#$(cmd)` is a number with a substitution in it: its value is the run's.
      if (node.namedChildCount > 0) return partsValue(node, env, quoted);
      return { text: quoted ? unescapeDouble(node.text) : unescapeBare(node.text), static: true };
    case "word":
    case "variable_name":
    case "file_descriptor":
      return { text: quoted ? unescapeDouble(node.text) : unescapeBare(node.text), static: true };
    case "string_content":
      return { text: unescapeDouble(node.text), static: true };
    case "raw_string":
      return { text: node.text.slice(1, -1), static: true };
    case "ansi_c_string":
      return { text: decodeAnsiC(node.text.slice(2, -1)), static: true };
    case "string":
    case "translated_string":
      return partsValue(type === "string" ? node : (node.namedChild(0) ?? node), env, true);
    case "concatenation":
    case "command_name":
      return partsValue(node, env, quoted);
    case "simple_expansion":
    case "expansion":
      return expansionValue(node, env);
    case "process_substitution": {
      const out = env.substitute(node);
      return out === undefined
        ? { text: node.text, static: false }
        : { text: node.text, static: false, output: out };
    }
    case "command_substitution": {
      const out = env.substitute(node);
      return out === undefined ? { text: node.text, static: false } : { text: out, static: true };
    }
    default:
      return { text: node.text, static: false };
  }
}

const UNQUOTED_EXPANSIONS = new Set(["simple_expansion", "expansion", "command_substitution"]);

/**
 * An argument's words: usually one, several for a brace list (`{rm,-rf,/}` is three words), and a
 * leading `~` is the home directory. Globs are kept as written; paths say when they are globs.
 */
export function argumentWords(
  outer: ShellNode,
  env: WordEnv,
  home: string | undefined,
  outerType: string = outer.type,
): WordValue[] {
  // A command name wraps its word: look at the word itself.
  const wrapped = outerType === "command_name" && outer.namedChildCount === 1;
  const node = wrapped ? (outer.namedChild(0) ?? outer) : outer;
  const type = wrapped ? node.type : outerType;
  const value = wordValue(node, env, false, type);
  if (UNQUOTED_EXPANSIONS.has(type) && value.static) {
    // Unquoted, a known value is split into words: `x="rm -rf /"; $x` runs rm.
    return value.text
      .split(/[ \t\n]+/u)
      .filter((text) => text !== "")
      .map((text) => ({ text, static: true }));
  }
  if (type === "word" || type === "concatenation") {
    const raw = node.text;
    const braces = /^\{([^{}\s]*,[^{}\s]*)\}$/u.exec(raw);
    if (braces?.[1] !== undefined && value.static) {
      return braces[1].split(",").map((text) => ({ text: unescapeBare(text), static: true }));
    }
    if (home !== undefined && (raw === "~" || raw.startsWith("~/"))) {
      return [{ text: home + value.text.slice(1), static: value.static }];
    }
  }
  return [value];
}
