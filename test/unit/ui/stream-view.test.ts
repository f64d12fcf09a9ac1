/** The record page's streamed-answer section: produced, shown and the cut, escaped. */
import { describe, expect, it } from "vitest";
import type { DecisionRecord } from "../../../src/log/record.js";
import { streamSection } from "../../../src/ui/stream-view.js";

function record(event: Record<string, unknown>, stream: DecisionRecord["stream"]): DecisionRecord {
  return { kind: "decision", event, ...(stream === undefined ? {} : { stream }) } as DecisionRecord;
}

describe("record page: a streamed answer", () => {
  it("shows the model's text, the shown text and the cut point, escaped", () => {
    const produced = "Hello <b>there</b>, the rest is bad";
    const out = String(
      streamSection(
        record(
          { content: produced, stream: { offset: 0, shown: "Hello <b>there</b>[cut]", cutAt: 18 } },
          { producedChars: produced.length, shownChars: 23, cutAt: 18 },
        ),
      ),
    );
    expect(out).toContain("cut at 18");
    expect(out).toContain("Hello &lt;b&gt;there&lt;/b&gt;<mark");
    expect(out).toContain("✂, the rest is bad</mark>");
    expect(out).toContain("Hello &lt;b&gt;there&lt;/b&gt;[cut]");
    expect(out).not.toContain("<b>there");
  });

  it("is absent for a record that did not stream", () => {
    expect(String(streamSection(record({ content: "x" }, undefined)))).toBe("");
  });
});
