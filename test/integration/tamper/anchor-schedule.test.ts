/**
 * Anchors on a schedule: `hookbus audit anchor --every DURATION --out DIR` writes one anchor file
 * per new seal batch (nothing when nothing was sealed), and `audit verify --anchor DIR` checks the
 * newest, which catches a history deleted and re-created after it.
 */
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  anchorFileName,
  resolveAnchorPath,
  startAnchorSchedule,
} from "../../../src/audit/anchor-schedule.js";
import { sealStreamName } from "../../../src/log/seal/batch.js";
import { startChild } from "../../support/child.js";
import { until } from "../../support/wait.js";
import { useNatsServer } from "../pipeline/harness.js";
import {
  auditedSession,
  rewriteStream,
  sealKey,
  sealedUpToNow,
  toolCtx,
  toolEvent,
} from "./harness.js";

const nats = useNatsServer();
const cli = new URL("../../../bin/hookbus.js", import.meta.url).pathname;

describe("hookbus audit anchor --every", () => {
  it("writes an anchor per new seal batch, none while nothing is sealed, and verify checks the newest", async () => {
    const { p, sealer, addSealer, verify } = await auditedSession(nats.url());
    const dir = mkdtempSync(join(tmpdir(), "hookbus-anchors-"));
    const schedule = startAnchorSchedule({
      bus: p.bus,
      key: sealKey.pair,
      dir,
      everyMs: 30,
      logger: pino({ level: "silent" }),
    });
    await until(() => schedule.written === 1, 10_000, "the first anchor");
    const ticks = schedule.ticks;
    await until(() => schedule.ticks >= ticks + 3, 10_000, "three more ticks");
    expect(schedule.written).toBe(1); // nothing new was sealed: nothing written

    const ctx = toolCtx("tc-later", "read_file");
    await p.client.call("before_tool_call", ctx, toolEvent("tc-later", "read_file"), {
      callId: "call-later",
    });
    await sealedUpToNow(p.bus);
    await until(() => schedule.written === 2, 10_000, "an anchor of the new batch");
    await schedule.stop();
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(2);
    expect(resolveAnchorPath(dir)).toBe(join(dir, files[1]!));
    expect(files[1]! > files[0]!).toBe(true);

    expect((await verify("--anchor", dir)).code).toBe(0);

    // The seals deleted and the log re-created: an honest sealer re-seals a history that looks
    // whole, and only the newest anchor tells.
    await sealer!.stop();
    await p.bus.jsm.streams.delete(sealStreamName(p.subjects));
    await rewriteStream(p.bus, p.subjects.logStream, (messages) => messages.slice(0, -1));
    const again = await addSealer();
    await sealedUpToNow(p.bus);
    await again.stop();
    const after = await verify("--anchor", dir);
    expect(after.code).toBe(1);
    expect(after.stdout).toMatch(/anchor/);
  });

  it("runs as a command until SIGTERM, and refuses a bad --every or a missing --out", async () => {
    const { p, cli: hookbus } = await auditedSession(nats.url(), { editable: false });
    const dir = mkdtempSync(join(tmpdir(), "hookbus-anchors-"));
    const keyFile = join(dir, "sealer.nk");
    writeFileSync(keyFile, `${sealKey.seed}\n`, { mode: 0o600 });
    const out = join(dir, "anchors");
    const bad = await hookbus(
      "audit",
      "anchor",
      "--key-file",
      keyFile,
      "--every",
      "10ms",
      "--out",
      out,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /^HOOKBUS_INVALID_ARGUMENT: --every "10ms": a duration from 1s to 7d/m,
    );
    const noOut = await hookbus("audit", "anchor", "--key-file", keyFile, "--every", "1h");
    expect(noOut.code).not.toBe(0);
    expect(noOut.stderr).toMatch(/--every needs --out DIR/);

    const child = startChild(
      [
        cli,
        "audit",
        "anchor",
        "--key-file",
        keyFile,
        "--every",
        "1s",
        "--out",
        out,
        "--server",
        nats.url(),
        "--namespace",
        p.namespace,
      ],
      { HOOKBUS_CLI_SOURCE: "1" },
    );
    try {
      await until(
        // The finished file, not the temporary one it is written to and renamed from.
        () => existsSync(out) && readdirSync(out).some((f) => /^anchor-\d+\.json$/.test(f)),
        30_000,
        "an anchor file",
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${child.output()}\n${child.errors()}`);
      });
      expect(readdirSync(out)).toEqual([
        anchorFileName(Number(/anchor-(\d+)/.exec(readdirSync(out)[0]!)![1])),
      ]);
    } finally {
      // Also when an assertion failed: a left-over `audit anchor --every` runs until killed.
      child.child.kill("SIGTERM");
    }
    expect(await child.exited).toBe(0);
  });
});
