/**
 * The parser-free path for a plain command: words of letters, digits and `_ . / : @ % + , -`
 * separated by single spaces, the first not a reserved word and no word an assignment. Bash gives
 * such text no meaning beyond its words (no quoting, expansion, glob, tilde, redirection, operator
 * or comment), so splitting on spaces is exactly what the parser would find; a property test holds
 * the two paths to the same facts. Most agent commands (`npm test`, `git status`) take this path.
 */
import type { RawCommand } from "./collect.js";

// `=` only inside a later word: tree-sitter-bash reads a word that starts with `=` (`==`) as
// an operator, and the two paths must agree.
const PLAIN = /^[A-Za-z0-9_./:@%+,-]+(?: [A-Za-z0-9_./:@%+,-][A-Za-z0-9_./:@%+,=-]*)*$/u;

const RESERVED = new Set([
  ..."if then else elif fi case esac for select while until do done in function time coproc".split(
    " ",
  ),
]);

/** The one command of a plain text, or undefined when the text needs the parser. */
export function plainCommand(text: string, via: readonly string[]): RawCommand | undefined {
  if (text.length > 512 || !PLAIN.test(text)) return undefined;
  const words = text.split(" ");
  if (RESERVED.has(words[0] ?? "")) return undefined;
  return { words: words.map((w) => ({ text: w, static: true })), via: [...via], redirects: [] };
}
