/**
 * The edge mode of a `streamText` step: text and reasoning deltas are shown as they come, through
 * the edge's streaming redactor (src/redact-stream/), one redactor per text or reasoning block.
 * Tool-call parts keep the rule of every mode: held until after_llm_call decided. At the step's
 * end before_response_emit is still asked with the model's whole text, and recorded as in the
 * hold mode; its block cuts the stream (reading it throws), but what was shown stays shown, which
 * is why `stream: "auto"` holds whenever a before_response_emit policy is registered.
 */
import { edgeRedactor, type StreamRedactor } from "../../redact-stream/index.js";

/** The part shapes the edge rewrites; every other part passes through untouched. */
type BlockPart<P> = P & { type: string; id: string };

/**
 * Redacts the deltas of each text and reasoning block as they stream: a delta shows what is
 * settled, the block's end flushes the rest. `shown` adds up what the user saw of text blocks.
 */
export class EdgeRedaction<P extends { type: string }> {
  private readonly open = new Map<string, StreamRedactor>();
  shown = "";

  /** The parts to send for `part` (a delta may become nothing while a window is held back). */
  rewrite(part: P): P[] {
    const kind = blockKind(part.type);
    if (kind === undefined) return [part];
    const block = part as BlockPart<P>;
    const key = `${kind}:${block.id}`;
    if (part.type.endsWith("-start")) {
      this.open.set(key, edgeRedactor());
      return [part];
    }
    const redactor = this.open.get(key) ?? edgeRedactor();
    this.open.set(key, redactor);
    if (part.type.endsWith("-delta")) {
      const delta = redactor.push((part as P & { delta: string }).delta);
      return delta === "" ? [] : [this.delta(part, kind, delta)];
    }
    this.open.delete(key);
    const rest = redactor.end();
    return rest === "" ? [part] : [this.delta(part, kind, rest), part];
  }

  /** What blocks still open hold back, as deltas (a stream that ended without their ends). */
  flush(make: (kind: "text" | "reasoning", id: string, delta: string) => P): P[] {
    const parts: P[] = [];
    for (const [key, redactor] of this.open) {
      const [kind, id] = splitKey(key);
      const rest = redactor.end();
      if (rest === "") continue;
      if (kind === "text") this.shown += rest;
      parts.push(make(kind, id, rest));
    }
    this.open.clear();
    return parts;
  }

  private delta(part: P, kind: "text" | "reasoning", delta: string): P {
    if (kind === "text") this.shown += delta;
    // Built anew: the model's part may carry its text in other fields (provider metadata).
    const id = (part as BlockPart<P>).id;
    return { type: `${kind}-delta`, id, delta } as unknown as P;
  }
}

function blockKind(type: string): "text" | "reasoning" | undefined {
  const match = /^(text|reasoning)-(start|delta|end)$/.exec(type);
  return match === null ? undefined : (match[1] as "text" | "reasoning");
}

function splitKey(key: string): ["text" | "reasoning", string] {
  const at = key.indexOf(":");
  return [key.slice(0, at) as "text" | "reasoning", key.slice(at + 1)];
}
