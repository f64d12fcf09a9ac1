/**
 * Deadlines in the body (protocol 2): the splice writes exactly `{timeoutMs, ...body}` as JSON,
 * readers take the body's field over the header and read both as the header was read, and the
 * call id is found in a body's first bytes only when they are what the agent SDK writes.
 */
import { headers as natsHeaders } from "@nats-io/transport-node";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  afterTimeoutMs,
  bodyTimeoutMs,
  headerTimeoutMs,
  leadingCallId,
  spliceTimeoutMs,
  withDeadline,
} from "../../../src/bus/body-deadline.js";
import { Header } from "../../../src/bus/headers.js";

const bytes = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8");
const text = (data: Uint8Array) => Buffer.from(data).toString("utf8");
const withHeader = (value: string) => {
  const h = natsHeaders();
  h.set(Header.TimeoutMs, value);
  return h;
};

describe("spliceTimeoutMs", () => {
  it("writes the body's members after the deadline, byte for byte", () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string().filter((k) => k !== "timeoutMs"),
          fc.jsonValue(),
        ),
        fc.nat(),
        (value, ms) => {
          const body = bytes(value);
          const spliced = spliceTimeoutMs(body, ms);
          expect(JSON.parse(text(spliced))).toEqual(
            JSON.parse(JSON.stringify({ timeoutMs: ms, ...value })),
          );
          // The shared body's bytes follow the deadline unchanged.
          if (body.length > 2)
            expect(text(spliced.subarray(afterTimeoutMs(spliced)))).toBe(text(body.subarray(1)));
        },
      ),
    );
  });

  it("writes a whole number of ms", () => {
    expect(text(spliceTimeoutMs(bytes({ a: 1 }), 12.7))).toBe('{"timeoutMs":12,"a":1}');
    expect(text(spliceTimeoutMs(bytes({}), 5))).toBe('{"timeoutMs":5}');
  });
});

describe("withDeadline", () => {
  it("sends a plain JSON body without a header block", () => {
    const wire = withDeadline({ data: bytes({ callId: "c" }), encoding: "json" }, 250, {
      [Header.CallId]: "c",
    });
    expect(wire.headers).toBeUndefined();
    expect(text(wire.data)).toBe('{"timeoutMs":250,"callId":"c"}');
  });

  it("keeps the deadline and the extra headers in headers for a body that needs decoding", () => {
    const data = new Uint8Array([0x1f, 0x8b, 1, 2]);
    const wire = withDeadline({ data, encoding: "gzip" }, 250, { [Header.CallId]: "c" });
    expect(wire.data).toBe(data);
    expect(wire.headers?.get(Header.TimeoutMs)).toBe("250");
    expect(wire.headers?.get(Header.Encoding)).toBe("gzip");
    expect(wire.headers?.get(Header.CallId)).toBe("c");
  });
});

describe("bodyTimeoutMs and headerTimeoutMs", () => {
  it("read the body's field as the header is read: a finite positive number, or none", () => {
    expect(bodyTimeoutMs(300)).toBe(300);
    expect(bodyTimeoutMs(1.5)).toBe(1.5);
    expect(bodyTimeoutMs(1e12)).toBe(1e12);
    for (const bad of [-1, 0, Infinity, NaN, "300", "soon", null, true, [300], { ms: 300 }])
      expect(bodyTimeoutMs(bad)).toBeUndefined();
    expect(headerTimeoutMs(withHeader("300"))).toBe(300);
    expect(headerTimeoutMs(withHeader("1.5"))).toBe(1.5);
    for (const bad of ["-1", "0", "NaN", "Infinity", "soon", ""])
      expect(headerTimeoutMs(withHeader(bad))).toBeUndefined();
    expect(headerTimeoutMs(undefined)).toBeUndefined();
  });
});

describe("leadingCallId", () => {
  it("reads the id of a body the agent SDK wrote, even when the rest cannot be parsed", () => {
    const body = spliceTimeoutMs(bytes({ callId: "call-7", hook: "before_tool_call" }), 900);
    expect(leadingCallId(body)).toBe("call-7");
    expect(leadingCallId(body.subarray(0, 40))).toBe("call-7");
    expect(leadingCallId(spliceTimeoutMs(bytes({ callId: "é-1" }), 1))).toBe("é-1");
  });

  it("reads nothing from any other shape", () => {
    const cases = [
      bytes({ callId: "c" }), // no deadline first (an agent before protocol 2 sends the header)
      bytes({ timeoutMs: 5, hook: "x", callId: "c" }),
      bytes({ timeoutMs: -5, callId: "c" }),
      bytes({ timeoutMs: 5, callId: 'a"b' }), // an escape
      bytes({ timeoutMs: 5, callId: "" }),
      bytes({ timeoutMs: 5, callId: "i".repeat(257) }),
      Buffer.from('{"timeoutMs":5,"callId":"unterminated'),
      Buffer.from('{"timeoutMs": 5,"callId":"c"}'),
      new Uint8Array([0x1f, 0x8b, 8, 0]),
    ];
    for (const data of cases) expect(leadingCallId(data)).toBeUndefined();
    expect(leadingCallId(bytes({ timeoutMs: 5, callId: "i".repeat(256) }))).toBe("i".repeat(256));
  });
});
