/**
 * The UI's escaping and parameter checks, without a server: `html` escapes every value (a
 * property over arbitrary strings), the JSON view marks redacted pointers and escapes keys and
 * values, and the search parameters are refused with the parameter's name.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeHtml, html } from "../../src/ui/html.js";
import { jsonView } from "../../src/ui/json-view.js";
import { MAX_PARAM_CHARS, searchQuery } from "../../src/ui/params.js";

const unescape = (text: string) =>
  text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#96;/g, "`")
    .replace(/&amp;/g, "&");

describe("escapeHtml", () => {
  it("leaves no markup character and round-trips (any string)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const escaped = escapeHtml(text);
        expect(escaped).not.toMatch(/[<>"'`]/);
        expect(unescape(escaped)).toBe(text);
      }),
    );
  });

  it("html`` escapes values, nested arrays included, and keeps Html as markup", () => {
    fc.assert(
      fc.property(fc.array(fc.string()), (parts) => {
        const out = html`<p title="${parts.join("")}">${parts}</p>`.text;
        const joined = escapeHtml(parts.join(""));
        expect(out).toBe(`<p title="${joined}">${parts.map(escapeHtml).join("")}</p>`);
      }),
    );
    expect(html`<td>${html`<b>x</b>`}</td>`.text).toBe("<td><b>x</b></td>");
  });
});

describe("jsonView", () => {
  it("escapes keys and values and marks redacted pointers (escaped ~ and /)", () => {
    const view = jsonView(
      { "<k>": '<img src=x onerror="1">', "a/b": "masked" },
      "/event",
      new Map([["/event/a~1b", "mask"]]),
    ).text;
    expect(view).not.toContain("<img");
    expect(view).not.toContain("<k>");
    expect(view).toContain("&lt;img src=x onerror=\\&quot;1\\&quot;&gt;");
    expect(view).toMatch(/<mark class="redacted" title="redacted \(mask\)">.*masked/);
  });

  it("cuts deep values instead of recursing without end", () => {
    let deep: unknown = "bottom";
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(jsonView(deep).text).toContain("… (cut)");
  });
});

describe("search parameters", () => {
  const q = (query: string) => searchQuery(new URL(`http://ui.invalid/?${query}`));
  const refused = (query: string, argument: string) => {
    expect(() => q(query)).toThrow(
      expect.objectContaining({ code: "HOOKBUS_INVALID_ARGUMENT", details: { argument } }),
    );
  };

  it("reads every filter", () => {
    const { filter, limit } = q(
      "agent=a&session=s&hook=before_tool_call&outcome=block&policy=p&status=timeout&blocked-by=b&since=1h&limit=10&cursor=5&shadow-changed=on",
    );
    expect(filter).toMatchObject({
      agentId: "a",
      sessionKey: "s",
      hook: "before_tool_call",
      outcome: "block",
      policy: "p",
      status: "timeout",
      blockedBy: "b",
      cursor: 5,
      shadowChanged: true,
    });
    expect(filter.since).toBeInstanceOf(Date);
    expect(limit).toBe(10);
  });

  it("empty fields are no filter", () => {
    expect(q("agent=&hook=").filter).toEqual({ limit: 50, newestFirst: true });
  });

  it("shows the newest records first unless asked for the oldest", () => {
    expect(q("").filter.newestFirst).toBe(true);
    expect(q("order=oldest").filter.newestFirst).toBeUndefined();
    refused("order=random", "order");
  });

  it("refuses, naming the parameter", () => {
    refused("limit=0", "limit");
    refused("limit=501", "limit");
    refused("cursor=-1", "cursor");
    refused("outcome=maybe", "outcome");
    refused("blocked-by=a%20b", "blocked-by");
    refused("since=yesterday", "since");
    refused("since=1h&until=2h", "since");
    refused("agent=a&agent=b", "agent");
    refused(`agent=${"a".repeat(MAX_PARAM_CHARS + 1)}`, "agent");
    refused("shadow-changed=maybe", "shadow-changed");
    refused("bogus=1", "bogus");
  });
});
