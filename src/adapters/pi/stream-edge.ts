/**
 * The edge mode of pi's `streamFn`: text and thinking deltas reach pi as they come, through the
 * edge's streaming redactor (src/redact-stream/), in partial messages that hold only what was
 * shown (tool-call blocks are left out until the finished message is decided). pi's events carry
 * the whole partial message, so each forwarded partial is rebuilt from the shown text, never
 * taken from the model's.
 */
import type { AssistantMessage, AssistantMessageEvent } from "@mariozechner/pi-ai";
import { edgeRedactor, type StreamRedactor } from "../../redact-stream/index.js";

type Block = AssistantMessage["content"][number];
type ShownBlock = Extract<Block, { type: "text" } | { type: "thinking" }>;

export class PiEdge {
  private readonly redactors = new Map<number, StreamRedactor>();
  /** The model's content index → the shown partial's block. */
  private readonly shownIndex = new Map<number, number>();
  private readonly blocks: ShownBlock[] = [];
  private base: AssistantMessage | undefined;

  /** The events to forward for the model's `event` (none for what is held back). */
  rewrite(event: AssistantMessageEvent): AssistantMessageEvent[] {
    switch (event.type) {
      case "start":
        this.base = { ...event.partial, content: [] };
        return [{ type: "start", partial: this.partial() }];
      case "text_start":
      case "thinking_start":
        this.open(event.contentIndex, event.type === "text_start" ? "text" : "thinking");
        {
          // Built field by field: a model's event may carry its text in other fields.
          const at = this.index(event.contentIndex);
          return [{ type: event.type, contentIndex: at, partial: this.partial() }];
        }
      case "text_delta":
      case "thinking_delta":
        return this.shown(
          event.type,
          event.contentIndex,
          this.redactor(event.contentIndex).push(event.delta),
        );
      case "text_end":
      case "thinking_end": {
        const rest = this.redactor(event.contentIndex).end();
        this.redactors.delete(event.contentIndex);
        const delta = this.shown(deltaType(event.type), event.contentIndex, rest);
        const at = this.index(event.contentIndex);
        const content = blockText(this.blocks[at]!);
        return [...delta, { type: event.type, contentIndex: at, content, partial: this.partial() }];
      }
      default:
        return [];
    }
  }

  /** Deltas for what blocks still hold back when the message ended without their ends. */
  flush(): AssistantMessageEvent[] {
    const events: AssistantMessageEvent[] = [];
    for (const [contentIndex, redactor] of this.redactors) {
      const kind = this.blocks[this.index(contentIndex)]!.type;
      const type = kind === "text" ? "text_delta" : "thinking_delta";
      events.push(...this.shown(type, contentIndex, redactor.end()));
    }
    this.redactors.clear();
    return events;
  }

  /** All text shown, in order (what the finished message's text becomes). */
  get shownText(): string {
    return this.blocks.map((b) => (b.type === "text" ? b.text : "")).join("");
  }

  private shown(
    type: "text_delta" | "thinking_delta",
    contentIndex: number,
    delta: string,
  ): AssistantMessageEvent[] {
    if (delta === "") return [];
    const at = this.index(contentIndex);
    const block = this.blocks[at]!;
    this.blocks[at] =
      block.type === "text"
        ? { ...block, text: block.text + delta }
        : { ...block, thinking: block.thinking + delta };
    return [{ type, contentIndex: at, delta, partial: this.partial() }];
  }

  private open(contentIndex: number, kind: "text" | "thinking"): void {
    this.shownIndex.set(contentIndex, this.blocks.length);
    this.blocks.push(
      kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" },
    );
  }

  private index(contentIndex: number): number {
    if (!this.shownIndex.has(contentIndex)) this.open(contentIndex, "text");
    return this.shownIndex.get(contentIndex)!;
  }

  private redactor(contentIndex: number): StreamRedactor {
    let redactor = this.redactors.get(contentIndex);
    if (redactor === undefined) {
      redactor = edgeRedactor();
      this.redactors.set(contentIndex, redactor);
    }
    return redactor;
  }

  private partial(): AssistantMessage {
    const base = this.base ?? ({ role: "assistant", content: [] } as unknown as AssistantMessage);
    return { ...base, content: this.blocks.map((b) => ({ ...b })) };
  }
}

function deltaType(type: "text_end" | "thinking_end"): "text_delta" | "thinking_delta" {
  return type === "text_end" ? "text_delta" : "thinking_delta";
}

function blockText(block: ShownBlock): string {
  return block.type === "text" ? block.text : block.thinking;
}
