/**
 * The assistant texts of the turn that just ended, read from the end of Claude Code's transcript
 * (JSONL, one entry per line) when the Stop input carries no `last_assistant_message`. Only the
 * file's tail is read: a transcript grows without bound over a long session.
 */
import { open } from "node:fs/promises";

/** How much of the transcript's end is read. A turn longer than this keeps only its last texts. */
export const TRANSCRIPT_TAIL_BYTES = 4 * 1024 * 1024;

interface Entry {
  type?: unknown;
  message?: { role?: unknown; content?: unknown };
}

function textsOf(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: unknown) =>
    typeof part === "object" &&
    part !== null &&
    (part as { type?: unknown }).type === "text" &&
    typeof (part as { text?: unknown }).text === "string"
      ? [(part as { text: string }).text]
      : [],
  );
}

/** A user entry that is a prompt (not a tool result carried in a user message) starts a turn. */
function startsTurn(entry: Entry): boolean {
  if (entry.type !== "user") return false;
  const content = entry.message?.content;
  if (typeof content === "string") return true;
  return (
    Array.isArray(content) &&
    content.some((part: unknown) => (part as { type?: unknown } | null)?.type === "text")
  );
}

/** The turn's assistant texts, oldest first, from JSONL text (a partial first line is skipped). */
export function turnTexts(jsonl: string): string[] {
  const texts: string[] = [];
  const lines = jsonl.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    let entry: Entry;
    try {
      entry = JSON.parse(lines[i]!) as Entry;
    } catch {
      continue; // a blank line, or the partial line where the tail was cut
    }
    if (typeof entry !== "object" || entry === null) continue;
    if (startsTurn(entry)) break;
    if (entry.type === "assistant") texts.unshift(...textsOf(entry.message?.content));
  }
  return texts;
}

export async function readTurnTexts(path: string): Promise<string[]> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    const length = Math.min(size, TRANSCRIPT_TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, size - length);
    return turnTexts(buffer.toString("utf8"));
  } finally {
    await file.close();
  }
}
