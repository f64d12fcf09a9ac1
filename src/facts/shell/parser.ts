/**
 * The bash parser: tree-sitter-bash's grammar run by web-tree-sitter, both WebAssembly shipped in
 * their npm packages (docs/facts.md, "Shell", says why this one). Loading is asynchronous and
 * happens once, at startup (`await loadShellParser()`); parsing after that is synchronous, so the
 * decision path never waits on a promise or compiles WebAssembly.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Language, Parser, type Tree } from "web-tree-sitter";
import { HookbusError } from "../../foundation/errors.js";

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

async function load(): Promise<void> {
  const require = createRequire(import.meta.url);
  try {
    await Parser.init();
    const wasm = await readFile(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    const language = await Language.load(wasm);
    const created = new Parser();
    created.setLanguage(language);
    parser = created;
  } catch (cause) {
    loading = undefined;
    throw new HookbusError(
      "HOOKBUS_SHELL_PARSER_UNAVAILABLE",
      "the shell parser could not be loaded: is tree-sitter-bash installed with its .wasm file?",
      {},
      cause,
    );
  }
}

/** Loads the parser once; later calls return the same promise. Call it before deciding calls. */
export function loadShellParser(): Promise<void> {
  loading ??= load();
  return loading;
}

export function shellParserLoaded(): boolean {
  return parser !== undefined;
}

/** Parses synchronously. The caller must `delete()` the tree: it lives in WebAssembly memory. */
export function parseBash(text: string): Tree {
  if (parser === undefined) {
    throw new HookbusError(
      "HOOKBUS_SHELL_PARSER_UNAVAILABLE",
      "shell facts asked for before `await loadShellParser()` finished",
    );
  }
  const tree = parser.parse(text);
  if (tree === null) {
    // Only a cancelled parse returns null, and nothing here cancels: a broken parser state.
    parser.reset();
    throw new HookbusError("HOOKBUS_SHELL_PARSER_UNAVAILABLE", "the shell parser returned no tree");
  }
  return tree;
}
