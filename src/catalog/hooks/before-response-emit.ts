import { z } from "zod";
import { blockFields, decisionFields } from "../common.js";

/** The most characters of a streamed answer one event names (the whole-answer bound). */
export const MAX_STREAM_CHARS = 1_000_000;

/**
 * Where a before_response_emit event sits in a streamed answer. A window event (`window` set)
 * asks only the policies that opted in (`stream: true`): its `content` is the text not yet
 * shown, and its verdict's `content` replaces that text ("" or a block cuts the stream). The
 * end event asks every policy about the whole answer and says what the user was shown.
 */
export const StreamedAnswer = z.strictObject({
  window: z
    .int()
    .min(1)
    .optional()
    .describe("The window's number, from 1; absent: the event is the answer's end."),
  offset: z
    .int()
    .min(0)
    .max(MAX_STREAM_CHARS)
    .describe("Characters of the model's text before `content` (0 at the end event)."),
  shown: z
    .string()
    .max(MAX_STREAM_CHARS)
    .optional()
    .describe("End event: the text the user was shown, redactions and all."),
  cutAt: z
    .int()
    .min(0)
    .max(MAX_STREAM_CHARS)
    .optional()
    .describe(
      "End event: where the model's text was cut (its characters read), when a window blocked.",
    ),
});

export const event = z.looseObject({
  content: z.string().describe("The final assistant text about to be delivered."),
  allContent: z
    .array(z.string())
    .describe("Every assistant text of this run, in order (the last is usually `content`)."),
  channel: z.string().optional(),
  messageCount: z.int().min(0).optional(),
  stream: StreamedAnswer.optional().describe(
    "Present for a streamed answer (docs/streaming.md): a window of it (`window`), or its end.",
  ),
});

export const verdict = z.strictObject({
  content: z
    .string()
    .optional()
    .describe(
      'Replace the final text. "" blocks the response. Setting it locks allContent for lower-priority policies.',
    ),
  allContent: z
    .array(z.string())
    .optional()
    .describe(
      "The complete replacement of the run's assistant texts (redaction across turns), bounded by the original: entries beyond the original count are ignored, a shorter list drops the texts it does not list, [] removes them all. Setting it locks content.",
    ),
  ...blockFields,
});

export const decision = z.strictObject({
  ...decisionFields,
  content: z.string().optional(),
  allContent: z.array(z.string()).optional(),
});
