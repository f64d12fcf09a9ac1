/**
 * Mid-stream decisions (issue 34, item 2): while every before_response_emit policy opted in to
 * windows (`stream: true`), a streamed final answer is asked about window by window as it comes.
 * A window is the model's text not yet shown, sent once it reached `chars` characters or its
 * first character waited `ms` (checked as deltas arrive, and at the end). Its decision releases
 * the window as is, replaces it (a redaction of text not yet shown), or blocks: the stream is cut
 * there, and nothing after the cut is ever released. At the end the whole answer is asked as
 * before, with what the user was shown and where a cut happened, so the record holds both.
 *
 * One window is asked at a time and the next one waits for it: the model's stream is held by
 * backpressure, never buffered without bound.
 */
import { isHookbusBlockedError } from "../../agent/blocked.js";
import { HookbusError } from "../../foundation/errors.js";
import { cutText } from "../../redact-stream/index.js";
import { askHook } from "./decide.js";
import type { HookbusRun } from "./run.js";

/** How often a streamed answer's windows are asked. */
export interface StreamCadence {
  /** Characters of a window (default 256; 16 to 16,384). */
  chars?: number;
  /** The longest a character waits for its window to be asked, in ms (default 250; 10 to 10,000). */
  ms?: number;
}

export const WINDOW_CHARS = { default: 256, min: 16, max: 16_384 } as const;
export const WINDOW_MS = { default: 250, min: 10, max: 10_000 } as const;

export { CUT_MESSAGE } from "../../redact-stream/index.js";

/** The cadence with its defaults, or HOOKBUS_INVALID_ARGUMENT for a value out of its limits. */
export function checkCadence(cadence: StreamCadence = {}): Required<StreamCadence> {
  return {
    chars: bounded("streamWindow.chars", cadence.chars, WINDOW_CHARS),
    ms: bounded("streamWindow.ms", cadence.ms, WINDOW_MS),
  };
}

function bounded(
  name: string,
  value: number | undefined,
  limits: { default: number; min: number; max: number },
): number {
  if (value === undefined) return limits.default;
  if (!Number.isInteger(value) || value < limits.min || value > limits.max) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `${name} must be an integer from ${limits.min} to ${limits.max}, got ${String(value)}`,
    );
  }
  return value;
}

/** What a window's decision lets through, and whether the stream was cut after it. */
export interface Released {
  text: string;
  /** Set when a window blocked: the error to end the stream with, after `text`. */
  cut?: HookbusError;
}

export class StreamWindows {
  private readonly cadence: Required<StreamCadence>;
  private pending = "";
  private pendingSince = 0;
  /** The model's characters before `pending`. */
  private offset = 0;
  private window = 0;
  private produced = "";
  private cutAt: number | undefined;

  constructor(
    private readonly run: HookbusRun,
    cadence: StreamCadence = {},
    private readonly now: () => number = Date.now,
  ) {
    this.cadence = checkCadence(cadence);
  }

  /** Whether a window blocked: nothing more is released. */
  get cut(): boolean {
    return this.cutAt !== undefined;
  }

  /** Takes the model's next delta; releases what the windows asked so far allow. */
  async push(delta: string): Promise<Released> {
    if (this.cut) return { text: "" };
    if (this.pending === "") this.pendingSince = this.now();
    this.pending += delta;
    this.produced += delta;
    const due =
      this.pending.length >= this.cadence.chars ||
      this.now() - this.pendingSince >= this.cadence.ms;
    return due ? this.ask() : { text: "" };
  }

  /** The model's text ended: asks the last window. */
  async end(): Promise<Released> {
    if (this.cut || this.pending === "") return { text: "" };
    return this.ask();
  }

  /**
   * The whole answer's decision, taken as for a held answer, with what the user was `shown`. A
   * block still cuts (it throws); a rewrite cannot unsend what was shown and is only recorded.
   */
  async decideWhole(shown: string): Promise<void> {
    const cutAt = this.cutAt;
    this.run.addText(this.produced);
    const decision = await askHook(
      this.run,
      "before_response_emit",
      this.run.context,
      {
        content: this.produced,
        allContent: [...this.run.texts],
        stream: { offset: 0, shown, ...(cutAt === undefined ? {} : { cutAt }) },
      },
      { throwOnBlock: cutAt === undefined },
    );
    void decision;
  }

  private async ask(): Promise<Released> {
    const content = this.pending;
    const offset = this.offset;
    this.pending = "";
    this.offset += content.length;
    this.window += 1;
    try {
      const decision = await askHook(this.run, "before_response_emit", this.run.context, {
        content,
        allContent: [...this.run.texts, content],
        stream: { window: this.window, offset },
      });
      return { text: decision.content ?? content };
    } catch (error) {
      if (!isHookbusBlockedError(error)) throw error;
      this.cutAt = offset;
      // What the model produced up to the cut: the rest is never read.
      this.produced = this.produced.slice(0, offset + content.length);
      return { text: cutText(error.blockReason), cut: error };
    }
  }
}
