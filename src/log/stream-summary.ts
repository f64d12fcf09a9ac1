/**
 * What a streamed answer's decision record says of the stream (issue 34, item 4), in numbers
 * only: the texts stay where the event has them (`event.content` what the model produced,
 * `event.stream.shown` what the user was shown), so the registry's redaction rules and the
 * privacy seal reach them by their usual pointers and no copy escapes either.
 */
import { z } from "zod";

export const StreamSummary = z
  .strictObject({
    window: z
      .int()
      .min(1)
      .optional()
      .describe("A window of the answer asked while it streamed; absent: the answer's end."),
    producedChars: z
      .int()
      .min(0)
      .describe("Characters of the model's text read so far (up to the cut, when one happened)."),
    shownChars: z
      .int()
      .min(0)
      .optional()
      .describe("End record: characters the user was shown (`event.stream.shown`)."),
    cutAt: z
      .int()
      .min(0)
      .optional()
      .describe("End record: where a window's block cut the model's text (its offset)."),
  })
  .meta({ id: "StreamSummary" });

export type StreamSummary = z.infer<typeof StreamSummary>;

interface StreamField {
  window?: number;
  offset?: number;
  shown?: string;
  cutAt?: number;
}

/** The summary of a before_response_emit event of a streamed answer; undefined for any other. */
export function streamSummaryOf(
  hook: string,
  event: Readonly<Record<string, unknown>>,
): StreamSummary | undefined {
  if (hook !== "before_response_emit") return undefined;
  const stream = event.stream as StreamField | undefined;
  if (typeof stream !== "object" || stream === null) return undefined;
  const content = typeof event.content === "string" ? event.content : "";
  const summary: StreamSummary = { producedChars: (stream.offset ?? 0) + content.length };
  if (stream.window !== undefined) summary.window = stream.window;
  if (typeof stream.shown === "string") summary.shownChars = stream.shown.length;
  if (stream.cutAt !== undefined) summary.cutAt = stream.cutAt;
  return summary;
}
