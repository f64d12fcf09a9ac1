/** Export files (NDJSON of log entries or bare records) and the replay progress bar. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookbusError } from "../../../src/index.js";

import { fixtureEntries } from "../../fixtures/replay-helpers.js";
import { readExport } from "../../../src/replay/export.js";
import { type ReplayEntry } from "../../../src/replay/types.js";
import { Progress } from "../../../src/replay/progress.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hookbus-replay-export-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readAll(path: string): Promise<ReplayEntry[]> {
  const entries: ReplayEntry[] = [];
  for await (const entry of readExport(path)) entries.push(entry);
  return entries;
}

async function failure(path: string): Promise<HookbusError> {
  try {
    await readAll(path);
  } catch (error) {
    if (error instanceof HookbusError) return error;
    throw error;
  }
  throw new Error("expected a HookbusError");
}

describe("readExport", () => {
  it("reads log entries as `audit query --json` prints them, with seq, subject and storedAt", async () => {
    const [first] = await fixtureEntries();
    expect(first).toMatchObject({ seq: 1, subject: expect.stringContaining(".audit.") as string });
    expect(first?.storedAt).toBeInstanceOf(Date);
    expect(first?.record.kind).toBe("observation");
  });

  it("accepts bare records and blank lines", async () => {
    const [entry] = await fixtureEntries();
    const path = join(dir, "bare.ndjson");
    await writeFile(path, `\n${JSON.stringify(entry!.record)}\n\n`);
    expect(await readAll(path)).toEqual([{ record: entry!.record }]);
  });

  it("names the file and line of an entry that is not a log record", async () => {
    const [entry] = await fixtureEntries();
    const path = join(dir, "bad.ndjson");
    await writeFile(
      path,
      `${JSON.stringify(entry)}\n${JSON.stringify({ record: { kind: "decision" } })}\n`,
    );
    const error = await failure(path);
    expect(error.code).toBe("HOOKBUS_BAD_MESSAGE");
    expect(error.message).toContain(`${path}:2: not a log entry`);
    expect(error.details).toMatchObject({ line: 2 });
  });

  it("names the line that is not JSON", async () => {
    const path = join(dir, "broken.ndjson");
    await writeFile(path, "{not json\n");
    const error = await failure(path);
    expect(error.code).toBe("HOOKBUS_BAD_MESSAGE");
    expect(error.message).toContain(":1: not a log entry: invalid JSON");
  });

  it("fails with HOOKBUS_INVALID_ARGUMENT for a file that does not exist", async () => {
    expect((await failure(join(dir, "missing.ndjson"))).code).toBe("HOOKBUS_INVALID_ARGUMENT");
  });
});

describe("the progress bar", () => {
  const terminal = () => {
    const writes: string[] = [];
    return { writes, stream: { isTTY: true, columns: 100, write: (t: string) => writes.push(t) } };
  };

  it("stays silent when stderr is not a terminal", () => {
    const writes: string[] = [];
    const progress = new Progress({ isTTY: false, write: (t: string) => writes.push(t) });
    for (let i = 0; i < 5000; i++) progress.tick(false);
    progress.done();
    expect(writes).toEqual([]);
  });

  it("stays silent for a short replay, and shows up past 1000 records", () => {
    let now = 0;
    const { writes, stream } = terminal();
    const progress = new Progress(stream, { now: () => now });
    for (let i = 0; i < 999; i++) progress.tick(false);
    expect(writes).toEqual([]);
    now = 500;
    progress.setFraction(0.5);
    progress.tick(true);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/^\rreplaying \[#+-+\] {2}50% 1000 records, 1 changed, 2000\/s/);
    progress.done();
    expect(writes.at(-1)).toBe("\r\x1b[K");
  });

  it("shows up after a second even for few records, without a bar when the size is unknown", () => {
    let now = 0;
    const { writes, stream } = terminal();
    const progress = new Progress(stream, { now: () => now });
    progress.tick(false);
    now = 1500;
    progress.tick(false);
    expect(writes).toEqual([`\rreplaying: 2 records, 0 changed, 1/s\x1b[K`]);
  });
});
