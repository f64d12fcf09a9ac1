/**
 * The seal batch, the anchor statement and the anchor file as JSON Schemas (schemas/seal/, from
 * `npm run schemas`; drift is checked in test/unit/catalog/schemas.test.ts): what zod accepts and
 * refuses, the checked-in schemas accept and refuse too, so a verifier in another language can
 * rely on them.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { AnchorFile, AnchorStatement } from "../../../src/audit/anchor.js";
import { SealBatch } from "../../../src/log/seal/batch.js";
import { checkSchema } from "../../support/json-schema.js";

const schema = (name: string) =>
  JSON.parse(
    readFileSync(fileURLToPath(new URL(`../../../schemas/seal/${name}`, import.meta.url)), "utf8"),
  ) as Parameters<typeof checkSchema>[2];

const hash = (c: string) => c.repeat(64);
const batch = {
  v: 1,
  namespace: "hookbus",
  index: 2,
  fromSeq: 5,
  toSeq: 7,
  prev: hash("a"),
  sessions: [
    {
      session: "agent-1.sess-1",
      prev: null,
      count: 2,
      records: [
        [5, hash("b")],
        [7, hash("c")],
      ],
    },
    { session: "agent-1.sess-2", prev: hash("d"), count: 9, records: [[6, hash("e")]] },
  ],
  loggedAt: "2026-11-24T23:00:00.000Z",
  sealedAt: "2026-11-24T23:00:00.120Z",
  sealer: "sealer-1",
};
const statement = {
  v: 1,
  namespace: "hookbus",
  stream: "HOOKBUS_SEALS",
  batch: 2,
  hash: hash("f"),
  toSeq: 7,
  sealedAt: "2026-11-24T23:00:00.120Z",
  anchoredAt: "2026-11-24T23:05:00.000Z",
};
const file = { statement: JSON.stringify(statement), key: "A".repeat(56), signature: "c2ln" };

const cases: [string, { safeParse(v: unknown): { success: boolean } }, unknown][] = [
  ["seal-batch.schema.json", SealBatch, batch],
  ["anchor-statement.schema.json", AnchorStatement, statement],
  ["anchor-file.schema.json", AnchorFile, file],
];

describe("seal JSON Schemas", () => {
  it.each(cases)("%s accepts what zod accepts", (name, zod, value) => {
    const doc = schema(name);
    expect(zod.safeParse(value).success).toBe(true);
    expect(checkSchema(doc, value, doc)).toEqual([]);
  });

  it.each(cases)("%s refuses an unknown field, like zod", (name, zod, value) => {
    const doc = schema(name);
    const extra = { ...(value as object), tampered: true };
    expect(zod.safeParse(extra).success).toBe(false);
    expect(checkSchema(doc, extra, doc)).not.toEqual([]);
  });

  it("seal-batch refuses a record hash that is not 64 hex digits and an empty session", () => {
    const doc = schema("seal-batch.schema.json");
    const badHash = {
      ...batch,
      sessions: [{ ...batch.sessions[0]!, records: [[5, "xyz"]] }],
    };
    const noRecords = { ...batch, sessions: [{ ...batch.sessions[0]!, records: [] }] };
    for (const value of [badHash, noRecords]) {
      expect(SealBatch.safeParse(value).success).toBe(false);
      expect(checkSchema(doc, value, doc)).not.toEqual([]);
    }
  });
});
