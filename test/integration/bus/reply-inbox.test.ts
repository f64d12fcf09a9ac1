/**
 * The shared reply inbox and the JetStream append over it, on a real nats-server: replies reach
 * their own request, failures keep nats.js's error classes (callers match on them), the bound
 * holds, and an append is de-duplicated by its message id as js.publish's would be.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import {
  ClosedConnectionError,
  connect,
  headers,
  NoRespondersError,
  RequestError,
  TimeoutError,
  type NatsConnection,
} from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplyInbox } from "../../../src/bus/reply-inbox.js";
import { appendToStream, isPermanentRefusal, parseAck } from "../../../src/bus/stream-append.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { findNatsServer, type NatsServerHandle } from "../../../src/testing/nats.js";
import { uniqueNamespace } from "../../support/nats.js";
import { rejection } from "../../support/wait.js";

let server: NatsServerHandle;
let nc: NatsConnection;
let responder: NatsConnection;
const text = (s: string) => new TextEncoder().encode(s);

beforeAll(async () => {
  server = await findNatsServer();
  nc = await connect({ servers: server.url });
  responder = await connect({ servers: server.url });
});

afterAll(async () => {
  await nc?.drain();
  await responder?.drain();
  await server?.stop();
});

describe("ReplyInbox", () => {
  it("re-sends a request marked `resend` with the same reply token until one is answered", async () => {
    const subject = `${uniqueNamespace()}.lossy`;
    const seen: string[] = [];
    responder.subscribe(subject, {
      callback: (_error, msg) => {
        seen.push(msg.reply ?? "");
        // The first copy is "lost" (a stream leader stepping down answers nothing).
        if (seen.length >= 2) msg.respond(msg.data);
      },
    });
    await responder.flush();
    const started = Date.now();
    const reply = await ReplyInbox.of(nc).request(subject, text("once"), {
      timeout: 5000,
      resend: { everyMs: 100 },
    });
    expect(reply.string()).toBe("once");
    expect(Date.now() - started).toBeLessThan(2000);
    expect(new Set(seen).size).toBe(1); // one token: the first answer wins, later ones are dropped
  });

  it("answers each of many concurrent requests with its own reply", async () => {
    const subject = `${uniqueNamespace()}.echo`;
    responder.subscribe(subject, {
      callback: (_error, msg) => {
        // Out of order on purpose: replies are matched by token, not by arrival.
        setTimeout(() => msg.respond(msg.data), Math.random() * 20);
      },
    });
    await responder.flush();
    const inbox = ReplyInbox.of(nc);
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        inbox.request(subject, text(`n${i}`), { timeout: 10_000 }),
      ),
    );
    expect(replies.map((m) => m.string())).toEqual(Array.from({ length: 200 }, (_, i) => `n${i}`));
    expect(inbox.size).toBe(0);
  });

  it("fails as nc.request does: no responders, timeout, closed connection", async () => {
    const inbox = ReplyInbox.of(nc);
    const none = await rejection(
      inbox.request(`${uniqueNamespace()}.nobody`, text("x"), { timeout: 5000 }),
    );
    expect(none).toBeInstanceOf(RequestError);
    expect((none as Error).cause).toBeInstanceOf(NoRespondersError);

    const silent = `${uniqueNamespace()}.silent`;
    responder.subscribe(silent, { callback: () => {} });
    await responder.flush();
    expect(await rejection(inbox.request(silent, text("x"), { timeout: 100 }))).toBeInstanceOf(
      TimeoutError,
    );
    expect(inbox.size).toBe(0);

    const own = await connect({ servers: server.url });
    const pending = ReplyInbox.of(own).request(silent, text("x"), { timeout: 30_000 });
    await own.close();
    expect(await rejection(pending)).toBeInstanceOf(ClosedConnectionError);
    expect(ReplyInbox.of(own).size).toBe(0);
  });

  it("refuses a request beyond its bound with HOOKBUS_INBOX_FULL", async () => {
    const own = await connect({ servers: server.url });
    try {
      const silent = `${uniqueNamespace()}.silent`;
      responder.subscribe(silent, { callback: () => {} });
      await responder.flush();
      const inbox = ReplyInbox.of(own, 2);
      const waiting = [1, 2].map(() => inbox.request(silent, text("x"), { timeout: 300 }));
      const refused = await rejection(inbox.request(silent, text("x"), { timeout: 300 }));
      expect(isHookbusError(refused, "HOOKBUS_INBOX_FULL")).toBe(true);
      for (const w of waiting) expect(await rejection(w)).toBeInstanceOf(TimeoutError);
    } finally {
      await own.close();
    }
  });
});

describe("appendToStream", () => {
  it("stores once per message id and reports the duplicate, as js.publish does", async () => {
    const ns = uniqueNamespace();
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: ns.toUpperCase(), subjects: [`${ns}.log.>`] });
    const first = await appendToStream(nc, `${ns}.log.a`, text("{}"), {
      msgID: "m1",
      headers: headers(),
      timeout: 5000,
    });
    const again = await appendToStream(nc, `${ns}.log.a`, text("{}"), {
      msgID: "m1",
      headers: headers(),
      timeout: 5000,
    });
    expect(first).toMatchObject({ stream: ns.toUpperCase(), duplicate: false });
    expect(again).toEqual({ ...first, duplicate: true });
    const stored = await jsm.streams.getMessage(ns.toUpperCase(), { seq: first.seq });
    expect(stored?.header.get("Nats-Msg-Id")).toBe("m1");
    await jsm.streams.delete(ns.toUpperCase());
  });

  it("a JetStream error ack is a coded error, never a sequence, and says whether it is for good", () => {
    const refusedWith = (errCode: number): unknown => {
      try {
        parseAck(
          text(JSON.stringify({ error: { code: 503, err_code: errCode, description: "full" } })),
        );
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const full = refusedWith(10077);
    expect(isHookbusError(full, "HOOKBUS_LOG_REFUSED") && full.message).toMatch(/full/);
    expect(isPermanentRefusal(full)).toBe(false);
    expect(isPermanentRefusal(refusedWith(10054))).toBe(true); // over the stream's max msg size
    expect(() => parseAck(text("not json"))).toThrow(/unreadable JetStream ack/);
    expect(() => parseAck(text("{}"))).toThrow(/without stream and seq/);
  });
});
