/**
 * Replay of a streamed answer (issue 34, item 4): a window record is re-decided by the candidate
 * policies that opted in (as the coordinator asks them), and at the answer's end record the
 * replay says what the user was shown and what the candidate set would have shown: the windows'
 * replayed text (a replacement, or the cut's message at the first block) through the edge's
 * redactor, as the adapters show it. Windows the recording never produced (it was cut earlier
 * than the candidates would cut) cannot be replayed: the result says `truncated`.
 */
import type { Decision, ModifyingHookName } from "../catalog/catalog.js";
import type { DecisionRecord } from "../log/record.js";
import { cutText, edgeRedactor } from "../redact-stream/index.js";
import { streamsWindows } from "../registry/stream-entry.js";
import type { Candidate } from "./candidates.js";

export interface StreamShown {
  /** What the user was shown (`event.stream.shown` of the end record). */
  shown: string;
  /** What the candidate set would have shown, from the recorded windows. */
  wouldShow: string;
  /** The recording was cut before the candidates would cut: text after it was never produced. */
  truncated: boolean;
}

interface Answer {
  released: string;
  cut: boolean;
}

interface StreamField {
  window?: number;
  shown?: string;
  cutAt?: number;
}

const streamOf = (record: DecisionRecord): StreamField | undefined =>
  record.hook === "before_response_emit"
    ? (record.event.stream as StreamField | undefined)
    : undefined;

/** The candidates a record asks: the opted-in ones for a window, as the coordinator does. */
export function candidatesFor(
  record: DecisionRecord,
  candidates: readonly Candidate[],
): readonly Candidate[] {
  return streamOf(record)?.window === undefined
    ? candidates
    : candidates.filter((c) => streamsWindows(c.entry));
}

/** The streamed answers of a replay in progress, one per session (an answer is one run's). */
export class StreamedAnswers {
  private readonly open = new Map<string, Answer>();

  /** Notes a replayed record; returns the end record's shown and would-be-shown texts. */
  note(
    session: string,
    record: DecisionRecord,
    replayed: Decision<ModifyingHookName>,
  ): StreamShown | undefined {
    const stream = streamOf(record);
    if (stream === undefined) return undefined;
    if (stream.window !== undefined) {
      this.window(session, record, replayed);
      return undefined;
    }
    const answer = this.open.get(session) ?? { released: "", cut: false };
    this.open.delete(session);
    const redactor = edgeRedactor();
    return {
      shown: typeof stream.shown === "string" ? stream.shown : "",
      wouldShow: redactor.push(answer.released) + redactor.end(),
      truncated: stream.cutAt !== undefined && !answer.cut,
    };
  }

  private window(
    session: string,
    record: DecisionRecord,
    replayed: Decision<ModifyingHookName>,
  ): void {
    const answer = this.open.get(session) ?? { released: "", cut: false };
    this.open.set(session, answer);
    if (answer.cut) return;
    const decision = replayed as Decision<"before_response_emit">;
    const content = typeof record.event.content === "string" ? record.event.content : "";
    if (decision.outcome === "block" || decision.content === "") {
      answer.cut = true;
      answer.released += cutText(decision.blockReason);
    } else answer.released += decision.content ?? content;
  }
}
