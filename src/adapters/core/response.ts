/**
 * before_response_emit for a run: the final assistant text, with every assistant text of the run
 * as `allContent` (collected by the run, so no adapter assembles it by hand).
 */
import { askHook } from "./decide.js";
import type { HookbusRun } from "./run.js";

/**
 * The text the user may see instead of `content`, the run's final assistant text. Throws
 * HookbusBlockedError when the response is blocked (`""` from a policy blocks too).
 *
 * Only the final text can still be changed: earlier texts of the run were already handed to the
 * framework. A decision that rewrites `allContent` (and not `content`) is applied to the final
 * text through its last entry; a shorter `allContent` that drops it yields "".
 */
export async function decideResponse(run: HookbusRun, content: string): Promise<string> {
  run.addText(content);
  const allContent = [...run.texts];
  const decision = await askHook(run, "before_response_emit", run.context, {
    content,
    allContent,
    ...(run.context.channel === undefined ? {} : { channel: run.context.channel }),
  });
  if (decision.content !== undefined) return decision.content;
  if (decision.allContent !== undefined) return decision.allContent[allContent.length - 1] ?? "";
  return content;
}
