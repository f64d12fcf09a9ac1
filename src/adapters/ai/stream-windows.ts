/**
 * The windows mode of a `streamText` step (issue 34, item 2): while every before_response_emit
 * policy opted in (`stream: true`), text deltas go to those policies window by window
 * (../core/stream-windows.ts), then through the edge's redactor (./stream-edge.ts) to the user.
 * A window's block cuts the stream: its text block ends with the replacement message, and the
 * next part read throws the block (HOOKBUS_BLOCKED); nothing the model wrote after it is shown.
 */
import type { HookbusError } from "../../foundation/errors.js";
import { StreamWindows, type StreamCadence } from "../core/stream-windows.js";
import type { HookbusRun } from "../core/run.js";
import type { EdgeRedaction } from "./stream-edge.js";

export interface Windowed<P extends { type: string }> {
  windows: StreamWindows;
  edge: EdgeRedaction<P>;
  /** The block that cut the stream, once one did. */
  cut: HookbusError | undefined;
  /** The text block whose window is open (its deltas came, its end did not yet). */
  open?: string | undefined;
}

/** The windows mode's state; windows stream only through the edge (on whenever they are). */
export function windowedOf<P extends { type: string }>(mode: {
  edge: EdgeRedaction<P> | undefined;
  windows: StreamWindows | undefined;
}): Windowed<P> | undefined {
  const { edge, windows } = mode;
  return windows === undefined || edge === undefined
    ? undefined
    : { windows, edge, cut: undefined };
}

/** The windows of this step, or none unless `"auto"` finds every response policy streaming. */
export function windowsMode(
  run: HookbusRun,
  mode: "auto" | "edge" | "hold",
  responseEmit: boolean,
  cadence: Required<StreamCadence>,
): StreamWindows | undefined {
  if (mode !== "auto" || !responseEmit) return undefined;
  return run.client.responseStreaming() === "windows" ? new StreamWindows(run, cadence) : undefined;
}

/** The parts the windows take: a text block's deltas and its end (which asks the last window). */
export function windowedText(part: { type: string }): boolean {
  return part.type === "text-delta" || part.type === "text-end";
}

type TextPart = { type: string; id: string; delta?: string };

/** What to send for a text delta or end: what its window's decision released, redacted at the edge. */
export async function windowedParts<P extends { type: string }>(
  windowed: Windowed<P>,
  part: P,
  delta: (kind: "text", id: string, text: string) => P,
): Promise<P[]> {
  const text = part as unknown as TextPart;
  windowed.open = part.type === "text-delta" ? text.id : undefined;
  const released =
    part.type === "text-delta"
      ? await windowed.windows.push(text.delta ?? "")
      : await windowed.windows.end();
  const out =
    released.text === "" ? [] : windowed.edge.rewrite(delta("text", text.id, released.text));
  if (released.cut !== undefined) {
    windowed.cut = released.cut;
    // The block's text ends here: what the edge still held, then the block's end.
    out.push(...windowed.edge.rewrite({ type: "text-end", id: text.id } as unknown as P));
    // Recorded now: the model's stream is not read again, so no step end will come.
    await windowed.windows.decideWhole(windowed.edge.shown);
    return out;
  }
  if (part.type === "text-end") out.push(...windowed.edge.rewrite(part));
  return out;
}

/** Ends a text block the model left open: its last window is asked, and the block ends. */
export async function closeWindows<P extends { type: string }>(
  windowed: Windowed<P>,
  delta: (kind: "text", id: string, text: string) => P,
): Promise<P[]> {
  if (windowed.open === undefined || windowed.cut !== undefined) return [];
  const end = { type: "text-end", id: windowed.open } as unknown as P;
  return windowedParts(windowed, end, delta);
}
