/**
 * The corpora's shape (test/corpus/README.md): one entry per action, tool-agnostic, parsed and
 * bounded here so a malformed entry fails loudly instead of being skipped.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/** Far above the corpora's size; a runaway edit fails here, not in a slow run. */
const MAX_ENTRIES = 2_000;

const Entry = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9-]*$/)
    .max(80),
  category: z.string().min(1).max(40),
  /** Where the entry comes from: the issue, a public write-up, or a developer's day. */
  source: z.string().min(1).max(200).optional(),
  /** For harmful entries: what stops it. Both count as stopped. */
  expect: z.enum(["block", "approval"]).optional(),
  /** Shell facts that must be set for this command (a detector check, apart from the library). */
  facts: z.array(z.string().min(1)).max(8).optional(),
  shell: z.string().min(1).max(4_000).optional(),
  read: z.string().min(1).max(1_000).optional(),
  write: z.strictObject({ path: z.string().min(1), content: z.string() }).optional(),
  fetch: z.string().min(1).max(2_000).optional(),
  email: z
    .strictObject({ to: z.array(z.string()).min(1).max(20), subject: z.string(), body: z.string() })
    .optional(),
  mcp: z
    .strictObject({
      server: z.string().min(1),
      tool: z.string().min(1),
      params: z.record(z.string(), z.unknown()),
    })
    .optional(),
});
type Entry = z.infer<typeof Entry>;

const CorpusFile = z.strictObject({
  description: z.string(),
  entries: z.array(Entry).min(1).max(MAX_ENTRIES),
});

export type CorpusAction =
  | { kind: "shell"; command: string }
  | { kind: "read"; path: string }
  | { kind: "write"; path: string; content: string }
  | { kind: "fetch"; url: string }
  | { kind: "email"; to: string[]; subject: string; body: string }
  | { kind: "mcp"; server: string; tool: string; params: Record<string, unknown> };

export interface CorpusEntry {
  id: string;
  category: string;
  expect?: "block" | "approval";
  facts: string[];
  action: CorpusAction;
}

function actionOf(entry: Entry): CorpusAction {
  const actions: CorpusAction[] = [];
  if (entry.shell !== undefined) actions.push({ kind: "shell", command: entry.shell });
  if (entry.read !== undefined) actions.push({ kind: "read", path: entry.read });
  if (entry.write !== undefined) actions.push({ kind: "write", ...entry.write });
  if (entry.fetch !== undefined) actions.push({ kind: "fetch", url: entry.fetch });
  if (entry.email !== undefined) actions.push({ kind: "email", ...entry.email });
  if (entry.mcp !== undefined) actions.push({ kind: "mcp", ...entry.mcp });
  if (actions.length !== 1)
    throw new Error(`corpus entry ${entry.id}: needs exactly one action, has ${actions.length}`);
  return actions[0]!;
}

export function parseCorpus(text: string, name: string): CorpusEntry[] {
  const file = CorpusFile.parse(JSON.parse(text));
  const ids = new Set<string>();
  return file.entries.map((entry) => {
    if (ids.has(entry.id)) throw new Error(`${name}: entry id ${entry.id} twice`);
    ids.add(entry.id);
    const parsed: CorpusEntry = {
      id: entry.id,
      category: entry.category,
      facts: entry.facts ?? [],
      action: actionOf(entry),
    };
    if (entry.expect !== undefined) parsed.expect = entry.expect;
    return parsed;
  });
}

export function loadCorpus(name: "harmful" | "benign"): CorpusEntry[] {
  const path = fileURLToPath(new URL(`./${name}.json`, import.meta.url));
  return parseCorpus(readFileSync(path, "utf8"), name);
}
