/**
 * The parser-free path for plain commands: simple commands of plain words joined by ` | `,
 * ` && `, ` || ` or `; ` (single spaces around each). A plain word is letters, digits and
 * `_ . / : @ % + , -`, and after the program also `= ~ * ?`, or a whole quoted word; no
 * program is a reserved word or a declaration keyword, and no word of it is an assignment. Bash gives such text no meaning beyond
 * its words, its pipelines and its lists (no quoting, expansion, redirection or comment; a glob
 * is kept as written, as the parser path keeps it; a leading `~` is the home directory, as there),
 * so splitting is exactly what the parser would find. A property test holds the two paths to the
 * same facts (test/unit/facts/shell/plain.test.ts). Most agent commands (`npm test`,
 * `git status`, `rm -rf node_modules && npm ci`, `sort -u a | wc -l`) take this path.
 */
import type { RawCommand } from "./collect.js";
import type { ShellLimits } from "./limits.js";

/** Longest text taken without the parser: longer text is rare and the parser bounds it. */
const MAX_PLAIN_LENGTH = 512;

// The program has no `=` (`a=1` is an assignment) and no glob. An argument does not start with
// `=`: tree-sitter-bash reads a word that starts with `=` (`==`) as an operator.
// A single-quoted argument (`'a | b'`) is taken whole: its text is literal, whatever it holds.
const PROGRAM = "[A-Za-z0-9_./:@%+,~-]+";
// A double-quoted one too, when nothing in it is special there (no `$`, backquote, backslash, `!`).
const QUOTED = `(?:'[^'\\n]*'|"[^"$\`\\\\!\\n]*")`;
const ARGUMENT = `(?:[A-Za-z0-9_./:@%+,~*?-][A-Za-z0-9_./:@%+,=~*?-]*|${QUOTED})`;
const SIMPLE = `${PROGRAM}(?: ${ARGUMENT})*`;
/** Words, whole quoted words, and `;` (which ends the word before it). */
const TOKEN = /'[^'\n]*'|"[^"\n]*"|;|[^ '";]+/gu;
const PLAIN = new RegExp(`^${SIMPLE}(?:(?: \\| | && | \\|\\| |; )${SIMPLE})*$`, "u");

/** Reserved words, and the keywords tree-sitter-bash parses as declarations, not commands. */
const RESERVED = new Set([
  ..."if then else elif fi case esac for select while until do done in function time coproc".split(
    " ",
  ),
  ..."declare typeset export readonly local unset unsetenv".split(" "),
]);

const SEPARATORS = new Set(["|", "&&", "||"]);

/**
 * The parser nests a list in a list at each `&&` and `||`; its walk goes this much deeper below
 * the innermost list (pipeline, command, name, word). A text whose depth could reach the depth
 * limit, or with more commands than the limit, is left to the parser, which says which limit.
 */
const DEPTH_BELOW_LISTS = 8;

/** A word's value: as written, but a leading `~` alone or before `/` is the home directory. */
function wordOf(text: string, home: string | undefined): RawCommand["words"][number] {
  if (text.startsWith("'") || text.startsWith('"'))
    return { text: text.slice(1, -1), static: true };
  const tilde = home !== undefined && (text === "~" || text.startsWith("~/"));
  return { text: tilde ? home + text.slice(1) : text, static: true };
}

/**
 * The commands of a plain text, in order, with their pipeline stages; undefined when the text
 * needs the parser.
 */
export function plainCommands(
  text: string,
  via: readonly string[],
  home: string | undefined,
  limits: Pick<ShellLimits, "maxCommands" | "maxTreeDepth">,
): RawCommand[] | undefined {
  if (text.length > MAX_PLAIN_LENGTH || !PLAIN.test(text)) return undefined;
  const commands: RawCommand[] = [];
  let lists = 0;
  let words: string[] = [];
  let pipelines = 0;
  let stage: { id: number; stage: number } | undefined;
  const end = (next: string): boolean => {
    if (RESERVED.has(words[0] ?? "")) return false;
    const command: RawCommand = {
      words: words.map((w) => wordOf(w, home)),
      via: [...via],
      redirects: [],
    };
    // A pipeline's stages share its id; ids count pipelines in order, as the parser path does.
    if (next === "|") stage = stage === undefined ? { id: ++pipelines, stage: 0 } : stage;
    if (stage !== undefined) command.pipeline = stage;
    stage =
      next === "|" && stage !== undefined ? { id: stage.id, stage: stage.stage + 1 } : undefined;
    commands.push(command);
    words = [];
    return true;
  };
  for (const [word] of text.matchAll(TOKEN)) {
    if (SEPARATORS.has(word)) {
      if (word !== "|") lists += 1;
      if (!end(word)) return undefined;
    } else if (word === ";") {
      if (!end(";")) return undefined;
    } else words.push(word);
  }
  if (!end("") || commands.length > limits.maxCommands) return undefined;
  return lists + DEPTH_BELOW_LISTS > limits.maxTreeDepth ? undefined : commands;
}
