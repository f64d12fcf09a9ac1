/**
 * The hash chain without NATS: canonical JSON, record hashes, and the ChainKeeper's
 * compare-and-set loop against an in-memory KV that can lose races and answers.
 */
import { createHash } from "node:crypto";
import { JetStreamApiError } from "@nats-io/jetstream";
import type { KV, KvEntry } from "@nats-io/kv";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalize,
  ChainKeeper,
  chainKey,
  linkRecord,
  recordHash,
  recordMessageId,
} from "../../../src/log/chain.js";
import type { ObservationRecord } from "../../../src/log/record.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function observation(n: number, extra: Record<string, unknown> = {}): ObservationRecord {
  return {
    v: 1,
    kind: "observation",
    eventId: `ev-${n}`,
    hook: "llm_input",
    context: { agentId: "a", sessionKey: "s" },
    event: { n, ...extra },
    publishedAt: "2026-01-01T00:00:00.000Z",
  };
}

/**
 * The canonical form written the plain way (members sorted by UTF-16 code units, joined): the
 * reference the optimized writer must equal. (A key-sorted copy through JSON.stringify is not one:
 * objects put integer-like keys first whatever their insertion order.)
 */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => reference(v ?? null)).join(",")}]`;
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const members = Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${reference((value as never)[key])}`);
  return `{${members.join(",")}}`;
}

describe("canonicalize", () => {
  it("equals the plain sorted-members form for any JSON value, and parses back to it (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalize(value);
        expect(text).toBe(reference(value));
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });

  it("sorts keys at every depth and writes no whitespace", () => {
    expect(canonicalize({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it("writes strings and numbers as JSON.stringify does (RFC 8785 for ordinary JSON)", () => {
    expect(canonicalize({ s: 'é "q" \n \u0001 😀', n: [1e21, 0.1, -0, 100, 1.5e-7] })).toBe(
      '{"n":[1e+21,0.1,0,100,1.5e-7],"s":"é \\"q\\" \\n \\u0001 😀"}',
    );
  });

  it("sorts keys by UTF-16 code units (as RFC 8785 does), not by locale", () => {
    expect(canonicalize({ "\u00e9": 1, z: 2, Z: 3, "\ud83d\ude00": 4, "\uff21": 5 })).toBe(
      '{"Z":3,"z":2,"é":1,"😀":4,"Ａ":5}',
    );
  });

  it("drops undefined members and writes undefined array elements as null, like a JSON round trip", () => {
    const value = { a: undefined, b: [undefined, 1], c: { toJSON: () => "x" } };
    expect(canonicalize(value)).toBe('{"b":[null,1],"c":"x"}');
    expect(canonicalize(JSON.parse(JSON.stringify(value)))).toBe(canonicalize(value));
  });

  it("refuses values with no JSON form", () => {
    expect(() => canonicalize(undefined)).toThrow(TypeError);
    expect(() => canonicalize({ n: 1n })).toThrow(TypeError);
  });
});

describe("record hashes and links", () => {
  it("hashes the canonical JSON of the record with chain.hash left out (index and prev covered)", () => {
    const linked = linkRecord(observation(1), 1, null);
    const { hash, ...link } = linked.chain;
    expect(link).toEqual({ index: 1, prev: null });
    expect(hash).toBe(sha256(canonicalize({ ...linked, chain: { index: 1, prev: null } })));
    expect(recordHash(linked)).toBe(hash);
    // Any change, including to index or prev, changes the hash.
    expect(recordHash({ ...linked, chain: { ...linked.chain, index: 2 } })).not.toBe(hash);
    expect(recordHash({ ...linked, chain: { ...linked.chain, prev: "00" } })).not.toBe(hash);
    expect(recordHash({ ...linked, event: { n: 2 } })).not.toBe(hash);
  });

  it("survives a JSON round trip (what the log stores) with the same hash", () => {
    const linked = linkRecord(observation(1, { gone: undefined, list: [1, undefined] }), 3, "ab");
    const stored = JSON.parse(JSON.stringify(linked)) as unknown;
    expect(recordHash(stored)).toBe(linked.chain.hash);
  });

  it("names the message id each record kind is published with", () => {
    expect(recordMessageId(observation(7))).toBe("observed.ev-7");
  });

  it("keys a session by its encoded agent and session tokens", () => {
    expect(chainKey("agent.1", "s 1")).toBe("agent=2E1.s=201");
  });
});

/** A KV of one bucket in memory: revisions are a global sequence, put honours previousSeq. */
class FakeKv {
  seq = 0;
  readonly entries = new Map<string, { value: string; revision: number }>();
  puts = 0;
  /** Fail the next n puts as if another writer had won the race (after really writing theirs). */
  rivals: (() => void)[] = [];
  /** Apply the next put but lose its answer (a timeout), n times. */
  loseAnswers = 0;

  get(key: string): Promise<KvEntry | null> {
    const entry = this.entries.get(key);
    if (entry === undefined) return Promise.resolve(null);
    return Promise.resolve({
      key,
      revision: entry.revision,
      operation: "PUT",
      json: () => JSON.parse(entry.value) as unknown,
    } as unknown as KvEntry);
  }

  async put(key: string, value: string, opts: { previousSeq: number }): Promise<number> {
    this.puts++;
    await new Promise((r) => setTimeout(r, 1));
    this.rivals.shift()?.();
    const current = this.entries.get(key)?.revision ?? 0;
    if (current !== opts.previousSeq) {
      throw new JetStreamApiError({
        code: 400,
        err_code: 10071,
        description: "wrong last sequence",
      });
    }
    const revision = ++this.seq;
    this.entries.set(key, { value, revision });
    if (this.loseAnswers > 0) {
      this.loseAnswers--;
      throw new Error("TIMEOUT");
    }
    return revision;
  }

  create(key: string, value: string): Promise<number> {
    return this.put(key, value, { previousSeq: 0 });
  }

  head(key: string): { index: number; hash: string } {
    return JSON.parse(this.entries.get(key)!.value) as { index: number; hash: string };
  }
}

const keeperOn = (kv: FakeKv) => new ChainKeeper(kv as unknown as KV);
const soon = () => Date.now() + 5000;

function expectContiguous(
  records: { chain: { index: number; prev: string | null; hash: string } }[],
) {
  const sorted = [...records].sort((a, b) => a.chain.index - b.chain.index);
  sorted.forEach((r, i) => {
    expect(r.chain.index).toBe(i + 1);
    expect(r.chain.prev).toBe(i === 0 ? null : sorted[i - 1]!.chain.hash);
    expect(recordHash(r)).toBe(r.chain.hash);
  });
}

describe("ChainKeeper", () => {
  it("links a session's records 1..n, one compare-and-set each when they come one at a time", async () => {
    const kv = new FakeKv();
    const keeper = keeperOn(kv);
    const linked = [];
    for (let n = 1; n <= 5; n++) linked.push(await keeper.claim("a.s", observation(n), soon()));
    expectContiguous(linked);
    expect(kv.puts).toBe(5);
    expect(kv.head("a.s")).toEqual({ index: 5, hash: linked[4]!.chain.hash });
  });

  it("claims records that wait behind a compare-and-set in flight with one more (group commit)", async () => {
    const kv = new FakeKv();
    const keeper = keeperOn(kv);
    const linked = await Promise.all(
      Array.from({ length: 50 }, (_, n) => keeper.claim("a.s", observation(n), soon())),
    );
    expectContiguous(linked);
    expect(kv.puts).toBe(2);
  });

  it("keeps sessions apart", async () => {
    const kv = new FakeKv();
    const keeper = keeperOn(kv);
    const [a, b] = await Promise.all([
      keeper.claim("a.s1", observation(1), soon()),
      keeper.claim("a.s2", observation(2), soon()),
    ]);
    expect(a.chain.index).toBe(1);
    expect(b.chain.index).toBe(1);
  });

  it("two keepers (two processes) writing one session never fork the chain", async () => {
    const kv = new FakeKv();
    const [k1, k2] = [keeperOn(kv), keeperOn(kv)];
    const linked = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        (n % 2 === 0 ? k1 : k2).claim("a.s", observation(n), soon()),
      ),
    );
    expectContiguous(linked);
    expect(kv.head("a.s").index).toBe(40);
  });

  it("re-reads the head and re-links after losing a race", async () => {
    const kv = new FakeKv();
    const keeper = keeperOn(kv);
    const first = await keeper.claim("a.s", observation(1), soon());
    // Another process claims position 2 just before our next compare-and-set.
    const rival = linkRecord(observation(99), 2, first.chain.hash);
    kv.rivals.push(() => {
      kv.entries.set("a.s", {
        value: JSON.stringify({ index: 2, hash: rival.chain.hash }),
        revision: ++kv.seq,
      });
    });
    const third = await keeper.claim("a.s", observation(3), soon());
    expect(third.chain).toMatchObject({ index: 3, prev: rival.chain.hash });
  });

  it("treats a compare-and-set whose answer was lost but which went through as done", async () => {
    const kv = new FakeKv();
    const keeper = keeperOn(kv);
    kv.loseAnswers = 1;
    const linked = await keeper.claim("a.s", observation(1), soon());
    expect(linked.chain.index).toBe(1);
    expect(kv.head("a.s")).toEqual({ index: 1, hash: linked.chain.hash });
    const next = await keeper.claim("a.s", observation(2), soon());
    expect(next.chain).toMatchObject({ index: 2, prev: linked.chain.hash });
  });

  it("fails with HOOKBUS_LOG_UNAVAILABLE when no position can be claimed before the deadline", async () => {
    const kv = new FakeKv();
    kv.put = () => Promise.reject(new Error("no responders"));
    const keeper = keeperOn(kv);
    await expect(keeper.claim("a.s", observation(1), Date.now() + 200)).rejects.toMatchObject({
      code: "HOOKBUS_LOG_UNAVAILABLE",
    });
  });
});
