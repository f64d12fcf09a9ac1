/**
 * What an agent (or an adapter) may pass as an event: the input side of the schemas, with the
 * fields that carry a framework's own objects typed loosely.
 *
 * `HookEvent<H>` is what a policy receives: open objects with an index signature
 * (`{ role: string; [k: string]: unknown }`). An `interface` is never assignable to an index
 * signature (TypeScript adds implicit index signatures only to type literals), so a framework's
 * message or tool interface needed a cast to be sent (issue 13). Here those fields take any
 * object sharing a property with what the schema reads (`role`/`type`/`content` for a message,
 * `name`/`type` for a tool); the schema still validates every call at run time
 * (HOOKBUS_INVALID_EVENT), so nothing unchecked reaches a coordinator.
 */
import type { z } from "zod";
import type { catalog, HookName, ModifyingHookName, modifyingHooks } from "./catalog.js";

/** A chat message or a Responses-API item, as a framework types it. */
export interface MessageInput {
  readonly role?: string | undefined;
  readonly type?: string | undefined;
  readonly content?: unknown;
}

/** A tool definition as a framework types it (flat `{name}` or OpenAI `{type, function}`). */
export interface ToolDefinitionInput {
  readonly name?: string | undefined;
  readonly type?: string | undefined;
  readonly function?: unknown;
  readonly description?: string | undefined;
}

/** A tool call as a framework types it (flat `{id, name, arguments}` or OpenAI `{id, type, function}`). */
export interface ToolCallInput {
  readonly id?: string | undefined;
  readonly name?: string | undefined;
  readonly type?: string | undefined;
  readonly function?: unknown;
  readonly arguments?: unknown;
}

type Loosened<E> = {
  [K in keyof E]: K extends "messages"
    ? readonly MessageInput[] | Extract<E[K], undefined>
    : K extends "tools"
      ? readonly ToolDefinitionInput[] | Extract<E[K], undefined>
      : K extends "toolCalls"
        ? readonly ToolCallInput[] | Extract<E[K], undefined>
        : K extends "response"
          ? string | MessageInput | Extract<E[K], undefined>
          : K extends "params"
            ? unknown
            : E[K];
};

/** The event an agent sends for hook H (see the header: framework objects need no cast). */
export type HookEventInput<H extends HookName> = Loosened<z.input<(typeof catalog)[H]["event"]>>;

/** The context an agent sends for hook H. */
export type HookContextInput<H extends HookName> = z.input<(typeof catalog)[H]["context"]>;

/**
 * A decision whose list fields are typed as the caller's own items. Truthful for `tools` and
 * `toolCalls`: the merge returns entries of the original list (intersection rule), never a
 * policy's copy. `messages` is written by a policy and stays `Message`.
 */
export type DecisionOf<H extends ModifyingHookName, Tool = never, Call = never> = Omit<
  z.output<(typeof modifyingHooks)[H]["decision"]>,
  "tools" | "toolCalls"
> &
  ([Tool] extends [never] ? unknown : { tools?: Tool[] }) &
  ([Call] extends [never] ? unknown : { toolCalls?: Call[] });
