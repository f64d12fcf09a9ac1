/**
 * What a window's block shows in place of the text it cut (docs/streaming.md): the block's reason
 * in brackets, or a fixed message. One definition for the adapters that cut and for replay,
 * which says what a user would have been shown.
 */
export const CUT_MESSAGE = "[The rest of this answer was withheld by policy.]";

export function cutText(blockReason: string | undefined): string {
  return blockReason === undefined ? CUT_MESSAGE : `[${blockReason}]`;
}
