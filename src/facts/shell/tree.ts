/**
 * A parsed command copied out of WebAssembly into plain JavaScript objects, in one walk.
 *
 * web-tree-sitter's `Node` answers every read (type, end, children, fields) with a call into
 * WebAssembly, and the analysis reads each node several times: that was most of the cost of a
 * typical command. Here a TreeCursor visits every node once and keeps what the analysis reads:
 * its type (from the language's table by type id), whether it is named, its field in its parent
 * (only under the node types whose fields are read), and its start and end offsets. Text is
 * sliced from the command string by those offsets, never read from WebAssembly. The properties
 * and methods keep web-tree-sitter's names, so code written against `Node` reads the same.
 */
import type { Language, Tree, TreeCursor } from "web-tree-sitter";

/** Parent types whose children's fields the analysis reads (`childForFieldName`). */
const FIELD_PARENTS = new Set([
  "variable_assignment",
  "function_definition",
  "redirected_statement",
  "file_redirect",
]);

/** tree-sitter's type id for an error node: not in the language's table of types. */
const ERROR_TYPE = "ERROR";

export class ShellNode {
  readonly children: ShellNode[] = [];
  readonly namedChildren: ShellNode[] = [];

  constructor(
    /** Unique within one tree: a key for per-node memos. */
    readonly id: number,
    readonly type: string,
    readonly isNamed: boolean,
    readonly startIndex: number,
    readonly endIndex: number,
    /** This node's field name in its parent, read only under FIELD_PARENTS. */
    readonly field: string | undefined,
    private readonly source: string,
  ) {}

  get text(): string {
    return this.source.slice(this.startIndex, this.endIndex);
  }

  get namedChildCount(): number {
    return this.namedChildren.length;
  }

  namedChild(index: number): ShellNode | null {
    return this.namedChildren[index] ?? null;
  }

  childForFieldName(field: string): ShellNode | null {
    return this.children.find((child) => child.field === field) ?? null;
  }

  childrenForFieldName(field: string): ShellNode[] {
    return this.children.filter((child) => child.field === field);
  }
}

/** Whether each type id is named: asked of WebAssembly once per type, then kept. */
const namedTypes = new WeakMap<Language, boolean[]>();

function isNamedType(language: Language, typeId: number): boolean {
  let table = namedTypes.get(language);
  if (table === undefined) {
    table = [];
    namedTypes.set(language, table);
  }
  const known = table[typeId];
  if (known !== undefined) return known;
  // An error node's id is outside the table; tree-sitter counts an error as named.
  const named = typeId >= language.types.length || language.nodeTypeIsNamed(typeId);
  table[typeId] = named;
  return named;
}

/** A copied tree, and its `command` nodes in document order (for CommandCollector's sweep). */
export interface PlainTree {
  root: ShellNode;
  commands: ShellNode[];
}

interface Builder {
  cursor: TreeCursor;
  language: Language;
  source: string;
  nextId: number;
  commands: ShellNode[];
}

function current(builder: Builder, parent: ShellNode | undefined): ShellNode {
  const { cursor, language } = builder;
  const typeId = cursor.nodeTypeId;
  const type = language.types[typeId] ?? ERROR_TYPE;
  const fieldId =
    parent !== undefined && FIELD_PARENTS.has(parent.type) ? cursor.currentFieldId : 0;
  const field = fieldId === 0 ? undefined : (language.fields[fieldId] ?? undefined);
  const node = new ShellNode(
    builder.nextId++,
    type,
    isNamedType(language, typeId),
    cursor.startIndex,
    cursor.endIndex,
    field,
    builder.source,
  );
  if (type === "command") builder.commands.push(node);
  if (parent !== undefined) {
    parent.children.push(node);
    if (node.isNamed) parent.namedChildren.push(node);
  }
  return node;
}

/**
 * Copies the whole tree, depth first, without recursion (a deep tree cannot overflow the stack).
 * `source` must be the text the tree was parsed from. The tree can be deleted afterwards.
 */
export function plainTree(tree: Tree, source: string): PlainTree {
  const cursor = tree.walk();
  try {
    const commands: ShellNode[] = [];
    const builder: Builder = { cursor, language: tree.language, source, nextId: 0, commands };
    const root = current(builder, undefined);
    const ancestors: ShellNode[] = [];
    let parent = root;
    if (!cursor.gotoFirstChild()) return { root, commands };
    for (;;) {
      const node = current(builder, parent);
      if (cursor.gotoFirstChild()) {
        ancestors.push(parent);
        parent = node;
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        const up = ancestors.pop();
        if (up === undefined) return { root, commands };
        cursor.gotoParent();
        parent = up;
      }
    }
  } finally {
    cursor.delete();
  }
}
